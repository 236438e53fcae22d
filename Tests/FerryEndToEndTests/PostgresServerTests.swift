import FerryTesting
import Foundation
import Testing

/// The PostgreSQL server `Scripts/test` starts for the tests: there, reachable, empty, on loopback.
@Suite struct PostgresServerTests {
    /// The server's URL; in CI a missing one is a failure, elsewhere a skip with the reason printed.
    static func serverURL() throws -> String? { try TestEnvironment.postgresURLForTest() }

    @Test func theTestServerAnswersOnLoopback() throws {
        guard let url = try Self.serverURL() else { return }
        let psql = ["/usr/bin/psql", "/usr/local/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql"
        let answer = try ProcessResult.run(psql, [url, "-AtXc", "SELECT current_database(), inet_server_addr()"])
        #expect(answer.status == 0, "\(answer.errors)")
        #expect(answer.output.hasPrefix("ferry_test|127.0.0.1"), "\(answer.output)")
    }

    /// The test server's URL with a schema of the test's own, so tests do not meet each other's records.
    static func url(_ base: String, schema: String) -> String {
        base + (base.contains("?") ? "&" : "?") + "sslmode=disable&schema=\(schema)"
    }

    static let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"

    @Test func aStoreGoesIntoPostgresAndBackUnchanged() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let url = Self.url(base, schema: "e\(UInt32.random(in: 0...UInt32.max))")
        let first = try ferry(["copy", Self.cars, url, "--json"], in: scratch.path)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.contains("\"created\":13"))
        let again = try ferry(["copy", Self.cars, url, "--json"], in: scratch.path)
        #expect(again.status == 0 && again.output.contains("\"unchanged\":13") && again.output.contains("\"created\":0"), "\(again.output)")
        #expect(try ferry(["copy", url, "back.tar.zst", "-q"], in: scratch.path).status == 0)
        for (left, right) in [(Self.cars, url), (Self.cars, "back.tar.zst"), (url, "back.tar.zst")] {
            let diff = try ferry(["diff", left, right], in: scratch.path)
            #expect(diff.status == 0 && diff.output.contains("identical: 13 records"), "\(left) vs \(right): \(diff.output)\(diff.errors)")
        }
        let listing = try ferry(["ls", url], in: scratch.path)
        #expect(listing.output.contains("records  13 in 4 types and 4 zones"), "\(listing.output)")
        #expect(try ferry(["cat", url, "--type", "Car"], in: scratch.path).output.split(separator: "\n").count == 3)
        let verify = try ferry(["verify", url], in: scratch.path)
        #expect(verify.status == 0 && verify.output.contains(": OK (13 records, 2 assets, 156 B)"), "\(verify.output)\(verify.errors)")
    }

    static var psql: String { ["/usr/bin/psql", "/usr/local/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql" }

    /// Runs SQL on the test server, expecting it to succeed.
    static func sql(_ base: String, _ statements: String) throws {
        let result = try ProcessResult.run(psql, [base, "-AtXqc", statements])
        #expect(result.status == 0, "\(statements): \(result.errors)")
    }

    @Test func recordsTheServerRefusesGoToTheRejectFileAndTheRestIsWritten() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let schema = "r\(UInt32.random(in: 0...UInt32.max))"
        let url = Self.url(base, schema: schema)
        // The schema as a first copy leaves it, emptied, with a rule of the database's own that trucks break.
        #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
        try Self.sql(
            base,
            "TRUNCATE \(schema).records, \(schema).refs, \(schema).copy_journal; UPDATE \(schema).zones SET last_seq = 0; "
                + "ALTER TABLE \(schema).records ADD CONSTRAINT no_trucks CHECK (type <> 'Truck')")
        let copy = try ferry(["copy", Self.cars, url, "--json", "--reject-file", "rejects.jsonl"], in: scratch.path)
        #expect(copy.status == 1, "records were rejected: \(copy.errors)")
        #expect(copy.output.contains("\"created\":11") && copy.output.contains("\"rejected\":2"), "\(copy.output)")
        let rejects = try String(contentsOfFile: scratch.file("rejects.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(rejects.count == 2, "the two trucks")
        #expect(rejects.allSatisfy { $0.contains("Truck") && $0.contains("violates check constraint \\\"no_trucks\\\"") }, "\(rejects)")
        let listing = try ferry(["ls", url, "--json"], in: scratch.path)
        #expect(listing.output.contains("\"records\":11"), "\(listing.output)")
        try Self.sql(base, "DROP SCHEMA \(schema) CASCADE")
    }

    @Test func aPasswordAppearsInNoOutputAndNotInPs() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let components = try #require(URLComponents(string: base))
        let (host, port) = (try #require(components.host), try #require(components.port))
        let role = "p\(UInt32.random(in: 0...UInt32.max))"
        let secret = "pw-\(UInt32.random(in: 0...UInt32.max))-secret"
        let psql = ["/usr/bin/psql", "/usr/local/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql"
        let created = try ProcessResult.run(
            psql, [base, "-AtXc", "CREATE ROLE \(role) LOGIN PASSWORD '\(secret)' CREATEDB; GRANT CREATE ON DATABASE ferry_test TO \(role)"])
        #expect(created.status == 0, "\(created.errors)")
        let url = "postgres://\(role):\(secret)@\(host):\(port)/ferry_test?sslmode=disable&schema=\(role)"
        var outputs: [String] = []
        for arguments in [
            ["copy", Self.cars, url, "--json", "--reject-file", "rejects.jsonl"], ["copy", url, "out.tar.gz", "-v"], ["ls", url, "--json"],
            ["verify", url, "-v"], ["diff", Self.cars, url, "--json"],
            ["copy", Self.cars, "postgres://\(role):wrong-\(secret)@\(host):\(port)/ferry_test?sslmode=disable", "--json"],
        ] {
            let result = try ferry(arguments, in: scratch.path)
            outputs += [result.output, result.errors]
        }
        let wrong = try ferry(["copy", Self.cars, "postgres://\(role):wrong@\(host):\(port)/ferry_test?sslmode=disable"], in: scratch.path)
        #expect(wrong.status == 77, "\(wrong.errors)")
        for file in try FileManager.default.contentsOfDirectory(atPath: scratch.path) {
            outputs.append(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: scratch.file(file)))) ?? Data(), as: UTF8.self))
        }
        let unpacked = try ProcessResult.run("/usr/bin/tar", ["-xzOf", scratch.file("out.tar.gz")])
        outputs.append(unpacked.output)
        #expect(!outputs.joined().contains(secret), "the password shows in an output")
        #expect(outputs.joined().contains("\(role)@\(host)"), "the outputs name the server")
        // ps: a server that accepts and never answers keeps ferry waiting while its arguments are read.
        let listener = try SilentServer()
        defer { listener.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.ferryBinary)
        process.arguments = ["copy", "postgres://\(role):\(secret)@127.0.0.1:\(listener.port)/x?sslmode=disable", scratch.file("never.tar.gz")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 1)
        let cmdline = String(
            decoding: (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/cmdline"))) ?? Data(), as: UTF8.self)
        process.terminate()
        process.waitUntilExit()
        #expect(cmdline.contains("postgres://\(role):"), "the process was still running: \(cmdline)")
        #expect(!cmdline.contains(secret), "ps shows the password: \(cmdline)")
        _ = try ProcessResult.run(
            psql, [base, "-AtXc", "DROP SCHEMA IF EXISTS \(role) CASCADE; REVOKE CREATE ON DATABASE ferry_test FROM \(role); DROP ROLE \(role)"])
    }
}
