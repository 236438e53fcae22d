import FerryTesting
import Foundation
import Testing

/// The PostgreSQL server `Scripts/test` starts for the tests: there, reachable, empty, on loopback.
@Suite struct PostgresServerTests {
    /// The server's URL; in CI a missing one is a failure, elsewhere a skip with the reason printed.
    static func serverURL() throws -> String? {
        if let url = TestEnvironment.postgresURL { return url }
        if TestEnvironment.isCI { throw PostgresServerMissing() }
        print("skipped: no FERRY_TEST_PG_URL (run Scripts/test, which starts a PostgreSQL server, or point it at yours)")
        return nil
    }

    struct PostgresServerMissing: Error, CustomStringConvertible {
        var description: String { "FERRY_TEST_PG_URL is not set: Scripts/test starts the server in CI" }
    }

    @Test func theTestServerAnswersOnLoopback() throws {
        guard let url = try Self.serverURL() else { return }
        let psql = ["/usr/bin/psql", "/usr/local/bin/psql"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "psql"
        let answer = try ProcessResult.run(psql, [url, "-AtXc", "SELECT current_database(), inet_server_addr()"])
        #expect(answer.status == 0, "\(answer.errors)")
        #expect(answer.output.hasPrefix("ferry_test|127.0.0.1"), "\(answer.output)")
    }

    @Test func copiesIntoPostgresAreRefusedUntilTheBackendExists() throws {
        guard let url = try Self.serverURL() else { return }
        let scratch = try Scratch()
        let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"
        let result = try ferry(["copy", cars, url], in: scratch.path)
        #expect(result.status == 64 && result.errors.contains("PostgreSQL is not a target in this version of Ferry yet"), "\(result.errors)")
    }
}
