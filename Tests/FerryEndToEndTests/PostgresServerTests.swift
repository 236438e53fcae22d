import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The PostgreSQL server `Scripts/test` starts for the tests: there, reachable, empty, on loopback.
@Suite struct PostgresServerTests {
    /// The server's URL; in CI a missing one is a failure, elsewhere a skip with the reason printed.
    static func serverURL() throws -> String? { try TestEnvironment.postgresURLForTest() }

    @Test func theTestServerAnswersOnLoopback() throws {
        guard let url = try Self.serverURL() else { return }
        let answer = try ProcessResult.run(Self.psql, [url, "-AtXc", "SELECT current_database(), inet_server_addr()"])
        #expect(answer.status == 0, "\(answer.errors)")
        #expect(answer.output.hasPrefix("ferry_test|127.0.0.1"), "\(answer.output)")
    }

    /// The test server's URL with a schema of the test's own, so tests do not meet each other's records.
    static func url(_ base: String, schema: String) -> String {
        base + (base.contains("?") ? "&" : "?") + "sslmode=disable&schema=\(schema)"
    }

    /// A schema name of a test's own: `prefix` and a random number.
    static func schemaName(_ prefix: String) -> String { "\(prefix)\(UInt32.random(in: 0...UInt32.max))" }

    /// Runs `body` with a schema of the test's own on the test server, dropped afterwards.
    ///
    /// `body` gets the server's URL, a scratch directory, the schema (named from `prefix`) and its URL; the schema and
    /// the views `pg-views` made of it are dropped also after a failure. Does nothing where there is no test server.
    static func withSchema(_ prefix: String, _ body: (_ base: String, _ scratch: Scratch, _ schema: String, _ url: String) throws -> Void) throws {
        guard let base = try serverURL() else { return }
        let scratch = try Scratch()
        let schema = schemaName(prefix)
        defer { drop(base, schema + "_view", schema) }
        try body(base, scratch, schema, url(base, schema: schema))
    }

    /// Drops a test's schemas with what they hold, also after a test that failed part-way.
    static func drop(_ base: String, _ schemas: String...) {
        try? sql(base, schemas.map { "DROP SCHEMA IF EXISTS \($0) CASCADE" }.joined(separator: "; "))
    }

    static let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"

    @Test func aStoreGoesIntoPostgresAndBackUnchanged() throws {
        try Self.withSchema("e") { base, scratch, schema, url in
            let first = try ferry(["copy", Self.cars, url, "--json"], in: scratch.path)
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.output.contains("\"created\":13"))
            let again = try ferry(["copy", Self.cars, url, "--json"], in: scratch.path)
            #expect(again.status == 0 && again.output.contains("\"unchanged\":13") && again.output.contains("\"created\":0"), "\(again.output)")
            let started = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            #expect(try ferry(["copy", url, "back.tar.zst", "-q"], in: scratch.path).status == 0)
            // A database has no file to take a time from: the bundle is stamped with when the copy read it.
            let stamped = try ferry(["ls", "back.tar.zst", "--json"], in: scratch.path).output
            let createdAt = stamped.firstMatch(of: /"created_at":"([^"]+)"/).flatMap { try? Date($0.1 + "", strategy: .iso8601) }
            #expect(createdAt.map { $0 >= started && $0 <= Date() } == true, "\(stamped)")
            for (left, right) in [(Self.cars, url), (Self.cars, "back.tar.zst"), (url, "back.tar.zst")] {
                let diff = try ferry(["diff", left, right], in: scratch.path)
                #expect(diff.status == 0 && diff.output.contains("identical: 13 records"), "\(left) vs \(right): \(diff.output)\(diff.errors)")
            }
            let listing = try ferry(["ls", url], in: scratch.path)
            #expect(listing.output.contains("records  13 in 4 types and 4 zones"), "\(listing.output)")
            // The same store under another name is refused as a target of itself.
            let itself = try ferry(["copy", url, url.replacingOccurrences(of: "postgres://", with: "postgresql://")], in: scratch.path)
            #expect(itself.status == 64 && itself.errors.contains("are the same store"), "\(itself.errors)")
            #expect(try ferry(["cat", url, "--type", "Car"], in: scratch.path).output.split(separator: "\n").count == 3)
            let verify = try ferry(["verify", url], in: scratch.path)
            #expect(verify.status == 0 && verify.output.contains(": OK (13 records, 2 assets, 156 B)"), "\(verify.output)\(verify.errors)")
        }
    }

    @Test func aDryRunCountsWhatTheCopyDoesAndWritesNothingEvenIntoASchemaNotMadeYet() throws {
        try Self.withSchema("n") { base, scratch, schema, url in
            func counts(_ output: String) throws -> [String: Int] {
                let summary = try Self.message("summary", in: output)
                return ["created", "updated", "unchanged", "deleted", "rejected", "read"].reduce(into: [:]) { $0[$1] = summary[$1] as? Int }
            }
            let said = try ferry(["copy", Self.cars, url, "-n"], in: scratch.path)
            #expect(said.status == 0 && said.errors.contains("counts what a copy into it, empty, would do"), "\(said.errors)")
            let dry = try ferry(["copy", Self.cars, url, "-n", "--json"], in: scratch.path)
            #expect(dry.status == 0, "\(dry.errors)")
            let exists = try ProcessResult.run(Self.psql, [base, "-AtXc", "SELECT to_regclass('\(schema).records') IS NOT NULL"])
            #expect(exists.output.hasPrefix("f"), "a dry run creates no schema: \(exists.output)")
            let real = try ferry(["copy", Self.cars, url, "--json"], in: scratch.path)
            #expect(real.status == 0, "\(real.errors)")
            #expect(try counts(dry.output) == counts(real.output), "\(dry.output)\n\(real.output)")
            // Into the schema as it now is: all unchanged, said the same way by the dry run and the run.
            let again = try ferry(["copy", Self.cars, url, "-n", "--json"], in: scratch.path)
            #expect(try counts(again.output)["unchanged"] == 13, "\(again.output)")
        }
    }

    @Test func aStoredRecordThatDoesNotDecodeStopsACopyOutWith65AndLeavesNoBundle() throws {
        try Self.withSchema("d") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            try Self.sql(base, "UPDATE \(schema).records SET fields = '{\"n\": {\"type\": \"NOPE\", \"value\": 1}}' WHERE type = 'Bus'")
            // Read as lines, and as records (a filter reads records).
            for selection in [[], ["--type", "Bus"]] {
                let copy = try ferry(["copy", url, "out.tar.zst"] + selection, in: scratch.path)
                #expect(copy.status == 65, "\(selection): \(copy.errors)")
                #expect(
                    copy.errors.contains("record Bus.") && copy.errors.contains("CloudKit JSON") && copy.errors.contains("verify"),
                    "\(selection): \(copy.errors)")
                #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.zst")), "no bundle, not even half of one")
            }
            // What the message sends the user to: verify names every damaged record, and checks the others.
            let verify = try ferry(["verify", url, "--json"], in: scratch.path)
            #expect(verify.status == 65, "\(verify.errors)")
            let damaged = verify.output.split(separator: "\n").filter { $0.contains("undecodable-record") }
            #expect(damaged.count == 2 && damaged.allSatisfy { $0.contains("Bus.") }, "\(verify.output)")
            #expect(verify.output.contains("\"records\":13"), "\(verify.output)")
            // diff reads the database as lines: the damaged record is named the same way.
            let diff = try ferry(["diff", url, Self.cars], in: scratch.path)
            #expect(diff.status == 65, "\(diff.output)\(diff.errors)")
            #expect(diff.errors.contains("record Bus.") && diff.errors.contains("CloudKit JSON") && diff.errors.contains("verify"), "\(diff.errors)")
            // So does ls, which sizes every record.
            let list = try ferry(["ls", url], in: scratch.path)
            #expect(list.status == 65, "\(list.output)\(list.errors)")
            #expect(list.errors.contains("record Bus.") && list.errors.contains("CloudKit JSON") && list.errors.contains("verify"), "\(list.errors)")
        }
    }

    @Test func aRecordChangedByHandIsADigestMismatchForVerify() throws {
        try Self.withSchema("m") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            // A field added by hand: still CloudKit JSON, no longer what the digest stored with it was made of.
            try Self.sql(
                base,
                "UPDATE \(schema).records SET fields = fields || '{\"zz\": {\"type\": \"STRING\", \"value\": \"by hand\"}}' "
                    + "WHERE name = (SELECT min(name) FROM \(schema).records WHERE type = 'Bus')")
            let verify = try ferry(["verify", url, "--json"], in: scratch.path)
            #expect(verify.status == 65, "\(verify.errors)")
            let mismatches = verify.output.split(separator: "\n").filter { $0.contains("digest-mismatch") }
            #expect(mismatches.count == 1 && mismatches.allSatisfy { $0.contains("Bus.") }, "\(verify.output)")
            #expect(verify.output.contains("\"records\":13") && verify.output.contains("\"problems\":1"), "\(verify.output)")
        }
    }

    static var psql: String { ["/usr/bin/psql", "/usr/local/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql" }

    /// Runs SQL on the test server, expecting it to succeed.
    static func sql(_ base: String, _ statements: String) throws {
        let result = try ProcessResult.run(psql, [base, "-AtXqc", statements])
        #expect(result.status == 0, "\(statements): \(result.errors)")
    }

    @Test func aSchemaChangedByHandIsSaidAsSuchWith65() throws {
        try Self.withSchema("h") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            try Self.sql(base, "ALTER TABLE \(schema).records ALTER COLUMN created DROP DEFAULT, ALTER COLUMN created TYPE text")
            let other = schema + "_to"
            defer { Self.drop(base, other) }
            for command in [
                ["copy", url, "out.tar.zst"], ["copy", url, "out.tar.zst", "--type", "Car"], ["copy", url, Self.url(base, schema: other)],
                ["verify", url], ["cat", url],
            ] {
                let run = try ferry(command, in: scratch.path)
                #expect(run.status == 65, "\(command): \(run.errors)")
                #expect(
                    run.errors.contains("column created holds TEXT") && run.errors.contains("changed outside Ferry")
                        && !run.errors.contains("Generic description"), "\(command): \(run.errors)")
            }
            #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.zst")))
        }
    }

    @Test func aStoredAssetThatIsNotItsDigestStopsACopyOutWith65AndLeavesNoBundle() throws {
        try Self.withSchema("a") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            try Self.sql(
                base,
                "UPDATE \(schema).asset_chunks SET bytes = 'xx'::bytea WHERE sha256 = (SELECT sha256 FROM \(schema).assets ORDER BY sha256 LIMIT 1)")
            // Assets written while the records are read (a creation time known up front) and at the end (.tar.gz).
            for (output, time) in [("out.tar.zst", ["--created-at", "2026-01-01"]), ("out.tar.zst", []), ("out.tar.gz", [])] {
                let copy = try ferry(["copy", url, output] + time, in: scratch.path)
                #expect(copy.status == 65, "\(output) \(time): \(copy.errors)")
                #expect(
                    copy.errors.contains("do not hash to it") && copy.errors.contains("ferry verify") && copy.errors.contains(schema),
                    "\(output) \(time): \(copy.errors)")
                #expect(!FileManager.default.fileExists(atPath: scratch.file(output)), "no bundle, not even half of one")
            }
            let verify = try ferry(["verify", url], in: scratch.path)
            #expect(verify.status == 65 && verify.output.contains("DAMAGED"), "\(verify.output)\(verify.errors)")
            // Into another schema and into a local store: the damage is the source's, not a server out of reach (69).
            let other = schema + "_to"
            defer { Self.drop(base, other) }
            for target in [Self.url(base, schema: other), "local:" + scratch.file("copy.ferry")] {
                let copy = try ferry(["copy", url, target], in: scratch.path)
                #expect(copy.status == 65 && copy.errors.contains("do not hash to it"), "\(target): \(copy.errors)")
            }
        }
    }

    @Test func recordsTheServerRefusesGoToTheRejectFileAndTheRestIsWritten() throws {
        try Self.withSchema("r") { base, scratch, schema, url in
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
            // A string with \u0000, which jsonb cannot hold: that record alone is rejected.
            let zone = ZoneID(zoneName: "CarZone")
            try TestBundles.write(
                [
                    .record(Record(recordType: "Car", recordName: "Car.nul", zoneID: zone, fields: ["name": .string("a\u{0}b")])),
                    .record(Record(recordType: "Car", recordName: "Car.fine", zoneID: zone, fields: ["name": .string("fine")])),
                ], to: scratch.file("nul.tar.zst"))
            let nul = try ferry(["copy", "nul.tar.zst", url, "--json", "--reject-file", "nul.jsonl"], in: scratch.path)
            #expect(nul.status == 1 && nul.output.contains("\"created\":1") && nul.output.contains("\"rejected\":1"), "\(nul.output)\(nul.errors)")
            let refusal = try String(contentsOfFile: scratch.file("nul.jsonl"), encoding: .utf8)
            #expect(refusal.contains("Car.nul") && refusal.contains("jsonb cannot store"), "\(refusal)")
        }
    }

    /// A database whose encoding is not UTF-8: the copy warns up front, each record with a character the encoding cannot
    /// hold goes to the reject file with the server's message, and the others are stored as they were written.
    @Test func aDatabaseOfAnotherEncodingIsSaidAndItsUnholdableRecordsRejected() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let database = Self.schemaName("latin")
        try Self.sql(base, "CREATE DATABASE \(database) ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
        defer { try? Self.sql(base, "DROP DATABASE IF EXISTS \(database)") }
        var components = try #require(URLComponents(string: base))
        components.path = "/" + database
        let latin = try #require(components.string)
        let zone = ZoneID(zoneName: "CarZone")
        try TestBundles.write(
            [
                .record(Record(recordType: "Car", recordName: "Car.e", zoneID: zone, fields: ["name": .string("café crème")])),
                .record(Record(recordType: "Car", recordName: "Car.check", zoneID: zone, fields: ["name": .string("done ✓")])),
            ], to: scratch.file("text.tar.zst"))
        let copy = try ferry(["copy", "text.tar.zst", Self.url(latin, schema: "ferry"), "--json", "--reject-file", "r.jsonl"], in: scratch.path)
        #expect(copy.status == 1 && copy.output.contains("\"created\":1") && copy.output.contains("\"rejected\":1"), "\(copy.output)\(copy.errors)")
        #expect(copy.errors.contains("stores text as LATIN1") && copy.errors.contains("createdb -E UTF8"), "\(copy.errors)")
        let rejects = try String(contentsOfFile: scratch.file("r.jsonl"), encoding: .utf8)
        #expect(rejects.contains("Car.check") && rejects.contains("LATIN1") && !rejects.contains("Car.e\""), "\(rejects)")
        let stored = try ProcessResult.run(
            Self.psql, [latin, "-AtXq", "-c", "SET client_encoding = 'UTF8'", "-c", "SELECT fields->'name'->>'value' FROM ferry.records"])
        #expect(stored.output.trimmingCharacters(in: .whitespacesAndNewlines) == "café crème", "\(stored.output)\(stored.errors)")
    }

    /// A bundle of 12 000 records (cars, trucks, buses and their notes) in `scratch`.
    static func fleetBundle(in scratch: Scratch) throws -> String {
        let path = scratch.file("fleet.tar.zst")
        try TestBundles.write(TestRecords.fleet(vehicles: 2000, notesPerVehicle: 1).map { .record($0) }, to: path)
        return path
    }

    /// A relay to the test server at `base` that a test can cut or pause, and the URL of a schema through it (TLS off,
    /// so that the relay counts what a copy sends).
    static func relay(to base: String) throws -> (relay: TCPRelay, url: (_ schema: String) -> String) {
        let components = try #require(URLComponents(string: base))
        let relay = try TCPRelay(to: "127.0.0.1", port: try #require(components.port))
        let (user, path, port) = (components.user ?? "ferry", components.path, relay.port)
        return (relay, { schema in "postgres://\(user)@127.0.0.1:\(port)\(path)?sslmode=disable&schema=\(schema)" })
    }

    /// The URL of the test server at `base` for `role` with `password` (TLS off), in `schema` when one is given.
    static func url(_ base: String, role: String, password: String, schema: String? = nil) throws -> String {
        let components = try #require(URLComponents(string: base))
        let (host, port) = (try #require(components.host), try #require(components.port))
        return "postgres://\(role):\(password)@\(host):\(port)/ferry_test?sslmode=disable" + (schema.map { "&schema=\($0)" } ?? "")
    }

    @Test func aLostConnectionIsRetriedThenStopsWith75AndTheSameCommandResumes() throws {
        guard let base = try Self.serverURL() else { return }
        let (relay, url) = try Self.relay(to: base)
        defer { relay.stop() }
        let scratch = try Scratch()
        let bundle = try Self.fleetBundle(in: scratch)
        // The connection comes back while ferry waits: the copy goes on and finishes.
        let back = Self.schemaName("l")
        defer { Self.drop(base, back) }
        relay.cut(afterForwarding: 600_000)
        let restorer = Thread {
            while !relay.cutNow { Thread.sleep(forTimeInterval: 0.05) }
            Thread.sleep(forTimeInterval: 1)
            relay.restore()
        }
        restorer.start()
        let first = try ferry(["copy", bundle, url(back), "--batch-size", "500", "--json"], in: scratch.path)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.errors.contains("lost the connection to the server") && first.errors.contains("trying again in"), "\(first.errors)")
        #expect(first.output.contains("\"created\":12000"), "\(first.output)")
        let same = try ferry(["diff", bundle, url(back)], in: scratch.path)
        #expect(same.status == 0 && same.output.contains("identical: 12000 records"), "\(same.output)\(same.errors)")

        // The connection stays lost: the retries run out, exit 75, and the same command resumes once it is back.
        let lost = Self.schemaName("l")
        defer { Self.drop(base, lost) }
        relay.cut(afterForwarding: 600_000)
        let stopped = try ferry(["copy", bundle, url(lost), "--batch-size", "500", "--retries", "1"], in: scratch.path)
        #expect(stopped.status == 75, "\(stopped.errors)")
        #expect(
            stopped.errors.contains("did not come back after 1 attempts") && stopped.errors.contains("run the same command again"),
            "\(stopped.errors)")
        relay.restore()
        let resumed = try ferry(["copy", bundle, url(lost), "--batch-size", "500", "--json"], in: scratch.path)
        #expect(resumed.status == 0, "\(resumed.errors)")
        let counts = try Self.message("summary", in: resumed.output)
        let summary = counts.description
        let (skipped, created) = (try #require(counts["resumed"] as? Int), try #require(counts["created"] as? Int))
        #expect(skipped > 0 && skipped + created + (counts["unchanged"] as? Int ?? 0) == 12000, "\(summary)")
        let equal = try ferry(["diff", bundle, url(lost)], in: scratch.path)
        #expect(equal.status == 0 && equal.output.contains("identical: 12000 records"), "\(equal.output)\(equal.errors)")
    }

    @Test func aReadWhoseConnectionIsLostStopsWith75LeavingNoBundleAndRunsAgain() throws {
        guard let base = try Self.serverURL() else { return }
        let (relay, relayed) = try Self.relay(to: base)
        defer { relay.stop() }
        let scratch = try Scratch()
        let bundle = try Self.fleetBundle(in: scratch)
        let schema = Self.schemaName("r")
        defer { Self.drop(base, schema) }
        let url = relayed(schema)
        #expect(try ferry(["copy", bundle, url, "-q"], in: scratch.path).status == 0)
        // A whole read, to learn what it sends; then the same read, cut half-way through what it sends.
        let before = relay.forwardedBytes
        try FileManager.default.createDirectory(atPath: scratch.file("whole"), withIntermediateDirectories: true)
        #expect(try ferry(["copy", url, "whole/out.tar.zst", "-q", "--created-at", "2026-01-01"], in: scratch.path).status == 0)
        relay.cut(afterForwarding: (relay.forwardedBytes - before) / 2)
        let cut = try ferry(["copy", url, "out.tar.zst", "--retries", "1", "--created-at", "2026-01-01"], in: scratch.path)
        #expect(cut.status == 75, "\(cut.errors)")
        #expect(cut.errors.contains("run the same command again"), "\(cut.errors)")
        #expect(!cut.errors.contains("Generic description"), "a PostgresNIO error is said as what happened, not its placeholder")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.zst")), "no bundle, not even half of one")
        #expect(scratch.listing().filter { $0.hasPrefix(".out.") }.isEmpty, "\(scratch.listing())")
        relay.restore()
        let again = try ferry(["copy", url, "out.tar.zst", "-q", "--created-at", "2026-01-01"], in: scratch.path)
        #expect(again.status == 0, "\(again.errors)")
        let same = try scratch.read("out.tar.zst") == scratch.read("whole/out.tar.zst")
        #expect(same, "the bundle read again is the one read whole")
    }

    /// A `ferry` run in the background, its output in files of the scratch directory.
    final class BackgroundFerry {
        let process = Process()
        let output: String
        let errors: String

        init(_ arguments: [String], in scratch: Scratch, name: String) throws {
            output = scratch.file("\(name).out")
            errors = scratch.file("\(name).err")
            FileManager.default.createFile(atPath: output, contents: nil)
            FileManager.default.createFile(atPath: errors, contents: nil)
            process.executableURL = URL(fileURLWithPath: TestEnvironment.ferryBinary)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
            try process.run()
        }

        /// Waits for it to end; its exit status, standard output and error.
        func finish() -> (status: Int32, output: String, errors: String) {
            process.waitUntilExit()
            let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
            return (process.terminationStatus, read(output), read(errors))
        }
    }

    /// Polls `query` on the test server until it answers `true` (at most 60 s).
    static func waitUntil(_ base: String, _ query: String) throws {
        for _ in 0..<1200 {
            let answer = try ProcessResult.run(psql, [base, "-AtXc", query])
            if answer.output.hasPrefix("t") { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("\(query) never held")
    }

    @Test func copiesIntoOneZoneTakeTurnsAndCopiesIntoOthersDoNot() throws {
        try Self.withSchema("z") { base, scratch, schema, url in
            let cars = scratch.file("cars.tar.zst")
            let trucks = scratch.file("trucks.tar.zst")
            try TestBundles.write(TestRecords.fleet(vehicles: 4000, notesPerVehicle: 2, types: ["Car"]).map { .record($0) }, to: cars)
            try TestBundles.write(TestRecords.fleet(vehicles: 300, types: ["Truck"]).map { .record($0) }, to: trucks)
            // A zone claim of this test's schema (other tests' copies hold claims of their own).
            let claimed =
                "SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
                + "AND classid = (hashtext('\(schema).copy')::bigint & 4294967295)::oid"
            // The first copy goes through a relay that holds its traffic once it has claimed CarZone: it keeps the claim,
            // stalled mid-copy, for as long as the test needs.
            let (relay, through) = try Self.relay(to: base)
            defer { relay.stop() }
            let relayed = through(schema)
            let first = try BackgroundFerry(["copy", cars, relayed, "--batch-size", "1000", "-q"], in: scratch, name: "first")
            try Self.waitUntil(base, claimed)
            relay.pause()
            // Another copy into CarZone fails at once under --no-wait, and waits without it; one into TruckZone goes on beside.
            let refused = try ferry(["copy", cars, url, "--no-wait"], in: scratch.path)
            #expect(refused.status == 75, "\(refused.errors)")
            #expect(refused.errors.contains("another copy is writing zone CarZone (server process "), "\(refused.errors)")
            #expect(refused.errors.contains("without --no-wait to wait for it"), "\(refused.errors)")
            let beside = try ferry(["copy", trucks, url, "--no-wait", "--json"], in: scratch.path)
            #expect(beside.status == 0 && beside.output.contains("\"created\":600"), "\(beside.output)\(beside.errors)")
            let second = try BackgroundFerry(["copy", cars, url, "--json"], in: scratch, name: "second")
            for _ in 0..<600 where !((try? String(contentsOfFile: second.output, encoding: .utf8)) ?? "").contains("waiting for it to finish") {
                Thread.sleep(forTimeInterval: 0.05)
            }
            relay.resume()
            let (firstStatus, _, firstErrors) = first.finish()
            let (secondStatus, secondOutput, secondErrors) = second.finish()
            #expect(firstStatus == 0, "\(firstErrors)")
            #expect(secondStatus == 0, "\(secondErrors)")
            // With --json, the warning is a message of the output.
            #expect(
                secondOutput.contains("another copy is writing zone CarZone") && secondOutput.contains("waiting for it to finish"), "\(secondOutput)")
            // The same copy: what the first had committed when the second began counts as resumed, the rest it met.
            let counts = try Self.message("summary", in: secondOutput)
            let summary = counts.description
            #expect(counts["created"] as? Int == 0 && (counts["unchanged"] as? Int ?? 0) + (counts["resumed"] as? Int ?? 0) == 12000, "\(summary)")
            let listing = try ferry(["ls", url, "--json"], in: scratch.path)
            #expect(listing.output.contains("\"records\":12600"), "\(listing.output)")
            // The first copy gave its zone partitions of its own, indexed at its end; the copy waiting for the zone left
            // them to it: every partition has its indexes.
            let indexes = try ProcessResult.run(
                Self.psql,
                [
                    base, "-AtXc",
                    """
                    SELECT count(*) FILTER (WHERE to_regclass('\(schema).' || i) IS NULL), count(*) FROM (
                      SELECT unnest(ARRAY['records_feed', 'refs_target', 'refs_source']) i UNION ALL
                      SELECT unnest(ARRAY['records_z' || id || '_feed', 'refs_z' || id || '_target', 'refs_z' || id || '_source'])
                      FROM \(schema).zones WHERE to_regclass('\(schema).records_z' || id) IS NOT NULL) indexes
                    """,
                ])
            #expect(indexes.output == "0|6\n", "the shared partitions' and CarZone's own: \(indexes.output)\(indexes.errors)")
        }
    }

    @Test func aCopyKilledMidWayResumesToWhatAnUninterruptedCopyGives() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let bundle = try Self.fleetBundle(in: scratch)
        let (killed, whole) = (Self.schemaName("k"), Self.schemaName("w"))
        defer { Self.drop(base, killed, whole) }
        let copy = try BackgroundFerry(["copy", bundle, Self.url(base, schema: killed), "--batch-size", "200", "-q"], in: scratch, name: "killed")
        try Self.waitUntil(base, "SELECT coalesce(max(done), 0) >= 2000 FROM \(killed).copy_journal")
        kill(copy.process.processIdentifier, SIGKILL)
        let (status, _, _) = copy.finish()
        #expect(status == 9 || copy.process.terminationReason == .uncaughtSignal)
        let resumed = try ferry(["copy", bundle, Self.url(base, schema: killed), "--json"], in: scratch.path)
        #expect(resumed.status == 0, "\(resumed.errors)")
        let counts = try Self.message("summary", in: resumed.output)
        let summary = counts.description
        #expect((counts["resumed"] as? Int ?? 0) >= 2000, "\(summary)")
        #expect(try ferry(["copy", bundle, Self.url(base, schema: whole), "-q"], in: scratch.path).status == 0)
        let diff = try ferry(["diff", Self.url(base, schema: killed), Self.url(base, schema: whole)], in: scratch.path)
        #expect(diff.status == 0 && diff.output.contains("identical: 12000 records"), "\(diff.output)\(diff.errors)")
        let verify = try ferry(["verify", Self.url(base, schema: killed)], in: scratch.path)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
    }

    @Test func aSchemaOfAnEarlierLayoutIsReadAsItIsAndMigratedByTheNextCopyIntoIt() throws {
        try Self.withSchema("o") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            // Back to layout 2, as an earlier Ferry left it: one table of records and one of references for every zone,
            // the whole record dictionary in `fields`.
            try Self.sql(
                base,
                """
                CREATE TABLE \(schema).records_flat (LIKE \(schema).records INCLUDING DEFAULTS);
                INSERT INTO \(schema).records_flat SELECT * FROM \(schema).records;
                CREATE TABLE \(schema).refs_flat (LIKE \(schema).refs);
                INSERT INTO \(schema).refs_flat SELECT * FROM \(schema).refs;
                DROP TABLE \(schema).records, \(schema).refs;
                ALTER TABLE \(schema).records_flat RENAME TO records;
                ALTER TABLE \(schema).refs_flat RENAME TO refs;
                ALTER TABLE \(schema).records ALTER COLUMN name TYPE text COLLATE "default";
                ALTER TABLE \(schema).refs ALTER COLUMN source TYPE text COLLATE "default", ALTER COLUMN target TYPE text COLLATE "default";
                ALTER TABLE \(schema).records ADD PRIMARY KEY (zone, name);
                CREATE INDEX records_feed ON \(schema).records (zone, seq);
                CREATE INDEX refs_target ON \(schema).refs (zone, target);
                CREATE INDEX refs_source ON \(schema).refs (zone, source);
                UPDATE \(schema).records r SET fields = jsonb_build_object('fields', r.fields, 'recordName', r.name, 'recordType', r.type,
                    'zoneID', jsonb_build_object('zoneName', z.zone_name, 'ownerRecordName', z.owner_name))
                FROM \(schema).zones z WHERE z.id = r.zone AND r.fields IS NOT NULL;
                UPDATE \(schema).ferry_meta SET value = '2' WHERE key = 'version'
                """)
            func layout() throws -> String {
                try ProcessResult.run(Self.psql, [base, "-AtXc", "SELECT value FROM \(schema).ferry_meta WHERE key = 'version'"]).output
            }
            // Read as it is, and not migrated: a source is never written.
            #expect(try ferry(["copy", url, "back.tar.zst", "-q"], in: scratch.path).status == 0)
            let diff = try ferry(["diff", Self.cars, "back.tar.zst"], in: scratch.path)
            #expect(diff.status == 0 && diff.output.contains("identical: 13 records"), "\(diff.output)\(diff.errors)")
            #expect(try layout() == "2\n")
            // Views made now would stop working with the migration: refused, saying how to go on.
            let views = try ferry(["pg-views", url], in: scratch.path)
            #expect(views.status == 78 && views.errors.contains("migrate it first (any ferry copy into it does)"), "\(views.errors)")
            // The next copy into it migrates it, says so, and finds everything unchanged.
            let again = try ferry(["copy", Self.cars, url], in: scratch.path)
            #expect(again.status == 0 && again.output.contains(" 13 unchanged,"), "\(again.output)\(again.errors)")
            #expect(again.errors.contains("bringing schema \(schema) from Ferry's layout 2 to 7"), "\(again.errors)")
            #expect(try layout() == "7\n")
            #expect(try ferry(["pg-views", url], in: scratch.path).status == 0)
        }
    }

    @Test func viewsOfTheRecordNamesHoldASchemaAtLayout6UntilTheyAreGoneAndPgViewsRemakesItsOwn() throws {
        try Self.withSchema("l") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            // Back to layout 6: names in the database's own collation.
            try Self.sql(
                base,
                """
                ALTER TABLE \(schema).records ALTER COLUMN name TYPE text COLLATE "default";
                ALTER TABLE \(schema).refs ALTER COLUMN source TYPE text COLLATE "default", ALTER COLUMN target TYPE text COLLATE "default";
                UPDATE \(schema).ferry_meta SET value = '6' WHERE key = 'version'
                """)
            func psql(_ sql: String) throws -> String { try ProcessResult.run(Self.psql, [base, "-AtXc", sql]).output }
            func collations() throws -> String {
                try psql(
                    "SELECT string_agg(DISTINCT coalesce(co.collname, '?'), ',') FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                        + "LEFT JOIN pg_collation co ON co.oid = a.attcollation WHERE c.relnamespace = '\(schema)'::regnamespace "
                        + "AND c.relkind IN ('r', 'p') AND ((c.relname LIKE 'records%' AND a.attname = 'name') "
                        + "OR (c.relname LIKE 'refs%' AND a.attname IN ('source', 'target')))")
            }
            #expect(try collations() == "default\n")
            // Someone's own view of the names, and pg-views' (which, finding the schema at layout 6, tries to finish it).
            let own = "\(schema)_mine"
            try Self.sql(base, "CREATE VIEW \(own) AS SELECT name FROM \(schema).records")
            defer { try? Self.sql(base, "DROP VIEW IF EXISTS \(own)") }
            let views = try ferry(["pg-views", url], in: scratch.path)
            #expect(views.status == 0, "\(views.errors)")
            #expect(views.errors.contains("schema \(schema) stays at Ferry's layout 6"), "\(views.errors)")
            // Copies go on at layout 6 and say why it stays there, naming the views.
            let copy = try ferry(["copy", Self.cars, url], in: scratch.path)
            #expect(copy.status == 0 && copy.output.contains(" 13 unchanged,"), "\(copy.output)\(copy.errors)")
            #expect(copy.errors.contains("\(schema)_view.\"Car\"") && copy.errors.contains("\(schema)_view.\"Note\""), "\(copy.errors)")
            #expect(copy.errors.contains(own) && !copy.errors.contains("bringing schema"), "\(copy.errors)")
            #expect(try psql("SELECT value FROM \(schema).ferry_meta WHERE key = 'version'") == "6\n")
            // pg-views' views of another schema are its own too, but not this run's to remake: they stay, and hold it.
            let other = "\(schema)_other"
            defer { try? Self.sql(base, "DROP SCHEMA IF EXISTS \(other) CASCADE") }
            #expect(try ferry(["pg-views", url, "--view-schema", other, "-q"], in: scratch.path).status == 0)
            try Self.sql(base, "DROP VIEW \(own)")
            let stillHeld = try ferry(["pg-views", url], in: scratch.path)
            #expect(stillHeld.status == 0 && stillHeld.errors.contains("the views \(other).\"Bus\""), "\(stillHeld.errors)")
            #expect(try psql("SELECT count(*) FROM pg_views WHERE schemaname = '\(other)'") == "4\n")
            // Without the other views, pg-views drops its own, the migration finishes, and its views come back.
            try Self.sql(base, "DROP SCHEMA \(other) CASCADE")
            let remade = try ferry(["pg-views", url], in: scratch.path)
            #expect(remade.status == 0 && !remade.errors.contains("stays at"), "\(remade.errors)")
            #expect(remade.errors.contains("bringing schema \(schema) from Ferry's layout 6 to 7"), "\(remade.errors)")
            #expect(try psql("SELECT value FROM \(schema).ferry_meta WHERE key = 'version'") == "7\n")
            #expect(try collations() == "C\n")
            // A view's record names and its references join, whatever the names' collation in the tables.
            let joined = try psql("SELECT count(*) FROM \(schema)_view.\"Note\" n JOIN \(schema)_view.\"Car\" c ON n.car = c.record_name")
            #expect((Int(joined.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0, "\(joined)")
            let diff = try ferry(["diff", Self.cars, url], in: scratch.path)
            #expect(diff.status == 0 && diff.output.contains("identical: 13 records"), "\(diff.output)\(diff.errors)")
        }
    }

    @Test func viewsGiveEachFieldATypedColumn() throws {
        try Self.withSchema("v") { base, scratch, schema, url in
            let zone = ZoneID(zoneName: "AllZone")
            let targets = ["Target.1", "Target.2"].map { Record(recordType: "Target", recordName: $0, zoneID: zone, fields: ["n": .int64(1)]) }
            let mixed = Record(recordType: "Mixed", recordName: "Mixed.1", zoneID: zone, fields: ["value": .string("one")])
            try TestBundles.write((targets + [TestRecords.everyType(), mixed]).map { .record($0) }, to: scratch.file("all.tar.zst"))
            #expect(try ferry(["copy", "all.tar.zst", url, "-q"], in: scratch.path).status == 0)
            // Another writer's record whose field has another type than Ferry's (a bundle keeps one type per field).
            try Self.sql(
                base,
                "INSERT INTO \(schema).records(zone, name, type, tag, seq, created, modified, fields) SELECT zone, 'Mixed.2', 'Mixed', 'x', 999, "
                    + "now(), now(), '{\"value\": {\"type\": \"INT64\", \"value\": 2}}' FROM \(schema).records WHERE name = 'Mixed.1'")
            let views = try ferry(["pg-views", url, "--json"], in: scratch.path)
            #expect(views.status == 0, "\(views.errors)")
            #expect(views.output.contains("Mixed.value holds INT64 and STRING values; its column is jsonb"), "\(views.output)")
            let view = "\(schema)_view.\"Everything\""
            let types = try ProcessResult.run(
                Self.psql,
                [
                    base, "-AtXc",
                    "SELECT pg_typeof(string), pg_typeof(int), pg_typeof(double), pg_typeof(timestamp), pg_typeof(bytes), pg_typeof(reference), "
                        + "pg_typeof(location), pg_typeof(strings), pg_typeof(created) FROM \(view)",
                ])
            #expect(
                types.output == "text|bigint|double precision|timestamp with time zone|bytea|text|jsonb|jsonb|timestamp with time zone\n",
                "\(types.output)\(types.errors)")
            let values = try ProcessResult.run(
                Self.psql,
                [
                    base, "-qAtXc",
                    "SET TIME ZONE 'UTC'; SELECT record_name, zone, int, \"intMax\", double, timestamp, encode(bytes, 'hex'), reference, "
                        + "string = E'text \"quoted\" \\\\ / \\n\\t\\u0001 ✓ 𝄞', strings->>1 FROM \(view)",
                ])
            #expect(
                values.output
                    == "Everything.1|AllZone|-9223372036854775808|9223372036854775807|-1.5e-300|2023-11-14 22:13:20.123+00|000102feff|Target.1|t|y\n",
                "\(values.output)\(values.errors)")
            // A type whose records are all gone loses its view on the next run.
            try Self.sql(base, "UPDATE \(schema).records SET deleted = true WHERE type = 'Mixed'")
            let again = try ferry(["pg-views", url], in: scratch.path)
            #expect(again.status == 0 && again.output.contains("\(schema)_view.\"Mixed\": dropped"), "\(again.output)\(again.errors)")
        }
    }

    /// The JSON object of the output's first line of a message type.
    static func message(_ type: String, in output: String) throws -> [String: Any] {
        let line = try #require(output.split(separator: "\n").first { $0.contains("\"message_type\":\"\(type)\"") }, "no \(type) in \(output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func sinceAPositionACopyReadsOnlyWhatChangedDeletionsIncluded() throws {
        try Self.withSchema("i") { base, scratch, schema, url in
            #expect(try ferry(["copy", Self.cars, url, "-q"], in: scratch.path).status == 0)
            let full = try ferry(["copy", url, "full.tar.zst", "--json"], in: scratch.path)
            #expect(full.status == 0, "\(full.errors)")
            let first = try #require(try Self.message("position", in: full.output)["since"] as? String)
            #expect(first.hasPrefix("ft1-"))
            // Another writer adds a car and deletes a note.
            let notes = try ferry(["cat", url, "--type", "Note", "--zone", "CarZone"], in: scratch.path).output.split(separator: "\n")
            let firstNote = try #require(notes.first)
            let note = try #require(try JSONSerialization.jsonObject(with: Data(firstNote.utf8)) as? [String: Any])
            let zone = ZoneID(zoneName: "CarZone")
            let edits: [RecordChange] = [
                .record(Record(recordType: "Car", recordName: "Car.new", zoneID: zone, fields: ["name": .string("Trabant")])),
                .deletion(Deletion(recordType: "Note", recordName: try #require(note["recordName"] as? String), zoneID: zone)),
            ]
            try TestBundles.write(edits, to: scratch.file("edits.tar.zst"))
            #expect(try ferry(["copy", "edits.tar.zst", url, "-q"], in: scratch.path).status == 0)
            let changed = try ferry(["copy", url, "changed.tar.zst", "--since", first, "--json"], in: scratch.path)
            #expect(changed.status == 0, "\(changed.errors)")
            let summary = try Self.message("summary", in: changed.output)
            #expect(summary["records"] as? Int == 1 && summary["deletions"] as? Int == 1, "\(summary)")
            let listing = try ferry(["cat", "changed.tar.zst"], in: scratch.path)
            #expect(listing.output.contains("Car.new") && listing.output.contains(note["recordName"] as? String ?? "?"), "\(listing.output)")
            // From where that read ended, nothing.
            let second = try #require(try Self.message("position", in: changed.output)["since"] as? String)
            let nothing = try ferry(["copy", url, "nothing.tar.zst", "--since", second, "--json"], in: scratch.path)
            let none = try Self.message("summary", in: nothing.output)
            #expect(none["records"] as? Int == 0 && none["deletions"] as? Int == 0, "\(nothing.output)")
            // A position is no time: a source without a feed refuses it.
            let refused = try ferry(["copy", "full.tar.zst", "x.tar.zst", "--since", first], in: scratch.path)
            #expect(refused.status == 64 && refused.errors.contains("give --since a time instead"), "\(refused.errors)")
            // A position printed by a copy from another database (its zones made in another order) is refused, saying so.
            let other = schema + "_o"
            defer { Self.drop(base, other) }
            #expect(try ferry(["copy", "edits.tar.zst", Self.url(base, schema: other), "-q"], in: scratch.path).status == 0)
            #expect(try ferry(["copy", Self.cars, Self.url(base, schema: other), "-q"], in: scratch.path).status == 0)
            let foreign = try ferry(["copy", Self.url(base, schema: other), "y.tar.zst", "--since", first], in: scratch.path)
            #expect(foreign.status == 64, "\(foreign.errors)")
            #expect(foreign.errors.contains("was printed by a copy from another store"), "\(foreign.errors)")
            #expect(!FileManager.default.fileExists(atPath: scratch.file("y.tar.zst")))
            // Filled the same way, so its zones have the same numbers: still another store's position.
            let twin = schema + "_t"
            defer { Self.drop(base, twin) }
            #expect(try ferry(["copy", Self.cars, Self.url(base, schema: twin), "-q"], in: scratch.path).status == 0)
            let twins = try ferry(["copy", Self.url(base, schema: twin), "z.tar.zst", "--since", first], in: scratch.path)
            #expect(twins.status == 64 && twins.errors.contains("another store"), "\(twins.errors)")
            // And a local store's position is its own.
            #expect(try ferry(["copy", Self.cars, "local:" + scratch.file("a.ferry"), "-q"], in: scratch.path).status == 0)
            #expect(try ferry(["copy", Self.cars, "local:" + scratch.file("b.ferry"), "-q"], in: scratch.path).status == 0)
            let local = try ferry(["copy", "local:" + scratch.file("a.ferry"), "a.tar.zst", "--json"], in: scratch.path)
            let fromA = try #require(try Self.message("position", in: local.output)["since"] as? String)
            let fromB = try ferry(["copy", "local:" + scratch.file("b.ferry"), "b.tar.zst", "--since", fromA], in: scratch.path)
            #expect(fromB.status == 64 && fromB.errors.contains("another store"), "\(fromB.errors)")
            let again = try ferry(["copy", "local:" + scratch.file("a.ferry"), "a2.tar.zst", "--since", fromA], in: scratch.path)
            #expect(again.status == 0, "\(again.errors)")
        }
    }

    /// A role's timeouts (set for an application's queries) do not cut a copy short; a role without a connection to
    /// spare exits 75 saying what to do, one that may not write (as on a standby) exits 78.
    @Test func aRolesSettingsEitherDoNotStopACopyOrSayWhatToDo() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let role = Self.schemaName("t")
        try Self.sql(
            base,
            "CREATE ROLE \(role) LOGIN PASSWORD 'pw'; GRANT CREATE ON DATABASE ferry_test TO \(role); "
                + "ALTER ROLE \(role) SET statement_timeout = '1ms'; ALTER ROLE \(role) SET lock_timeout = '1ms'; "
                + "ALTER ROLE \(role) SET idle_in_transaction_session_timeout = '1ms'")
        defer {
            try? Self.sql(base, "DROP SCHEMA IF EXISTS \(role) CASCADE; REVOKE CREATE ON DATABASE ferry_test FROM \(role); DROP ROLE \(role)")
        }
        let url = try Self.url(base, role: role, password: "pw", schema: role)
        let copied = try ferry(["copy", Self.cars, url, "-q"], in: scratch.path)
        #expect(copied.status == 0, "\(copied.errors)")
        let back = try ferry(["diff", Self.cars, url, "-q"], in: scratch.path)
        #expect(back.status == 0, "\(back.output)\(back.errors)")

        try Self.sql(base, "ALTER ROLE \(role) CONNECTION LIMIT 0")
        let crowded = try ferry(["copy", Self.cars, url], in: scratch.path)
        #expect(crowded.status == 75 && crowded.errors.contains("no connection to spare"), "\(crowded.status) \(crowded.errors)")

        try Self.sql(base, "ALTER ROLE \(role) CONNECTION LIMIT -1; ALTER ROLE \(role) SET default_transaction_read_only = on")
        let standby = try ferry(["copy", Self.cars, url + "_new"], in: scratch.path)
        #expect(standby.status == 78 && standby.errors.contains("takes no writes"), "\(standby.status) \(standby.errors)")
    }

    @Test func aPasswordAppearsInNoOutputAndNotInPs() throws {
        guard let base = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let role = Self.schemaName("p")
        let secret = "pw-\(UInt32.random(in: 0...UInt32.max))-secret"
        let psql = ["/usr/bin/psql", "/usr/local/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql"
        let created = try ProcessResult.run(
            psql, [base, "-AtXc", "CREATE ROLE \(role) LOGIN PASSWORD '\(secret)' CREATEDB; GRANT CREATE ON DATABASE ferry_test TO \(role)"])
        #expect(created.status == 0, "\(created.errors)")
        let url = try Self.url(base, role: role, password: secret, schema: role)
        var outputs: [String] = []
        for arguments in [
            ["copy", Self.cars, url, "--json", "--reject-file", "rejects.jsonl"], ["copy", url, "out.tar.gz", "-v"], ["ls", url, "--json"],
            ["verify", url, "-v"], ["diff", Self.cars, url, "--json"],
            ["copy", Self.cars, try Self.url(base, role: role, password: "wrong-\(secret)"), "--json"],
        ] {
            let result = try ferry(arguments, in: scratch.path)
            outputs += [result.output, result.errors]
        }
        let wrong = try ferry(["copy", Self.cars, try Self.url(base, role: role, password: "wrong")], in: scratch.path)
        #expect(wrong.status == 77, "\(wrong.errors)")
        for file in try FileManager.default.contentsOfDirectory(atPath: scratch.path) {
            outputs.append(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: scratch.file(file)))) ?? Data(), as: UTF8.self))
        }
        let unpacked = try ProcessResult.run("/usr/bin/tar", ["-xzOf", scratch.file("out.tar.gz")])
        outputs.append(unpacked.output)
        #expect(!outputs.joined().contains(secret), "the password shows in an output")
        let host = try #require(URLComponents(string: base)?.host)
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
