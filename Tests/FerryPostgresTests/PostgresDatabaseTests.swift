import FerryCore
import FerryPostgres
import FerryTesting
import Foundation
import PostgresNIO
import Testing

/// Connecting to the real server `Scripts/test` starts, and Ferry's schema there.
@Suite struct PostgresDatabaseTests {
    /// The test server's URL; in CI a missing one is a failure, elsewhere a skip with the reason printed.
    static func serverURL() throws -> String? {
        if let url = TestEnvironment.postgresURL { return url }
        if TestEnvironment.isCI { throw ServerMissing() }
        print("skipped: no FERRY_TEST_PG_URL (run Scripts/test, which starts a PostgreSQL server, or point it at yours)")
        return nil
    }

    struct ServerMissing: Error, CustomStringConvertible {
        var description: String { "FERRY_TEST_PG_URL is not set: Scripts/test starts the server in CI" }
    }

    /// Settings for the test server with a schema of the test's own.
    static func settings(_ url: String, schema: String) throws -> PostgresSettings {
        try PostgresSettings(url: url + (url.contains("?") ? "&" : "?") + "schema=\(schema)&sslmode=disable")
    }

    static func schemaName() -> String { "t_\(UInt32.random(in: 0...UInt32.max))" }

    @Test func theSchemaIsCreatedOnceAndANewerOneIsRefused() async throws {
        guard let url = try Self.serverURL() else { return }
        let schema = Self.schemaName()
        let database = try await PostgresDatabase.open(try Self.settings(url, schema: schema))
        do {
            #expect(try await PostgresSchema.currentVersion(database) == 0)
            #expect(try await PostgresSchema.migrate(database) == 0)
            #expect(try await PostgresSchema.migrate(database) == PostgresSchema.version, "a second migration changes nothing")
            try await database.execute("UPDATE \(unescaped: schema).ferry_meta SET value = '99' WHERE key = 'version'")
            await #expect {
                try await PostgresSchema.migrate(database)
            } throws: { error in
                (error as? PostgresBackendError)?.code == .newerSchema && (error as? PostgresBackendError)?.kind == .config
                    && (error as? PostgresBackendError)?.message.contains("newer than this Ferry writes (1); update Ferry") == true
            }
        }
        try? await database.execute("DROP SCHEMA \(unescaped: schema) CASCADE")
        await database.close()
    }

    @Test func anUnreachableServerIsNamedAndTheCredentialsAreChecked() async throws {
        guard let url = try Self.serverURL() else { return }
        // A port nobody listens on: 69, naming it.
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: "postgres://ferry@127.0.0.1:1/ferry_test?sslmode=disable"))
        } throws: { error in
            guard let error = error as? PostgresBackendError else { return false }
            return error.code == .unavailable && error.kind == .unavailable && error.message.contains("cannot connect to 127.0.0.1 port 1")
        }
        // A role with a password, given the wrong one: 77, and the password appears nowhere.
        let admin = try await PostgresDatabase.open(try Self.settings(url, schema: "public"))
        let role = "r_\(UInt32.random(in: 0...UInt32.max))"
        try await admin.execute("CREATE ROLE \(unescaped: role) LOGIN PASSWORD 'right-password'")
        let host = try #require(URLComponents(string: url)?.host)
        let port = try #require(URLComponents(string: url)?.port)
        let wrong = "wrong-\(UInt32.random(in: 0...UInt32.max))"
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: "postgres://\(role):\(wrong)@\(host):\(port)/ferry_test?sslmode=disable"))
        } throws: { error in
            guard let error = error as? PostgresBackendError else { return false }
            return error.code == .authentication && error.kind == .permission && !error.message.contains(wrong)
                && !"\(error)".contains(wrong)
        }
        let right = try await PostgresDatabase.open(
            try PostgresSettings(url: "postgres://\(role):right-password@\(host):\(port)/ferry_test?sslmode=disable"))
        await right.close()
        // A database that is not there.
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: "postgres://ferry@\(host):\(port)/no_such_db?sslmode=disable"))
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("create it (createdb no_such_db)") == true
        }
        try await admin.execute("DROP ROLE \(unescaped: role)")
        await admin.close()
    }

    @Test func tlsIsUsedAndTheCertificateCheckedAsAsked() async throws {
        guard let url = try Self.serverURL() else { return }
        guard let root = ProcessInfo.processInfo.environment["FERRY_TEST_PG_CA"] else {
            if TestEnvironment.isCI { throw ServerMissing() }
            print("skipped: no FERRY_TEST_PG_CA (Scripts/test's server has TLS with a certificate it makes)")
            return
        }
        let required = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=require"))
        await required.close()
        let verified = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=verify-full&sslrootcert=\(root)"))
        await verified.close()
        // Another certificate as the root: the server's is not trusted.
        let scratch = try Scratch()
        let made = try ProcessResult.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-keyout", scratch.file("other.key"),
                "-out", scratch.file("other.crt"),
            ])
        #expect(made.status == 0, "\(made.errors)")
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=verify-full&sslrootcert=\(scratch.file("other.crt"))"))
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("TLS with the server failed (sslmode=verify-full") == true
        }
    }
}
