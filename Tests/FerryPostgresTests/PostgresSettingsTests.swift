import FerryCore
import FerryPostgres
import FerryTesting
import Foundation
import Testing

/// Connection settings read as libpq reads them, with the password never shown.
@Suite struct PostgresSettingsTests {
    let noEnvironment: [String: String] = [:]

    @Test func urlsGiveHostPortUserDatabaseAndSchema() throws {
        let full = try PostgresSettings(url: "postgres://ann:s%40cret@db.example:6543/app?sslmode=require&schema=backup", environment: noEnvironment)
        #expect(full.host == .tcp("db.example", port: 6543))
        #expect(full.user == "ann" && full.password == "s@cret" && full.database == "app")
        #expect(full.sslMode == .require && full.schema == "backup")
        #expect(full.description == "postgres://ann@db.example:6543/app?schema=backup", "no password in the description")
        let short = try PostgresSettings(url: "postgresql://bob@localhost/", environment: noEnvironment)
        #expect(short.host == .tcp("localhost", port: 5432) && short.database == "bob" && short.schema == "ferry" && short.sslMode == .prefer)
        let ipv6 = try PostgresSettings(url: "postgres://u@[::1]:7000/d", environment: noEnvironment)
        #expect(ipv6.host == .tcp("::1", port: 7000) && ipv6.description == "postgres://u@[::1]:7000/d")
    }

    @Test func unixSocketsByPercentEncodedHostOrParameter() throws {
        let encoded = try PostgresSettings(url: "postgres://u@%2Fvar%2Frun%2Fpostgresql/d", environment: noEnvironment)
        #expect(encoded.host == .socket(directory: "/var/run/postgresql", port: 5432))
        #expect(encoded.host.socketPath == "/var/run/postgresql/.s.PGSQL.5432")
        let parameter = try PostgresSettings(url: "postgres://u@/d?host=/tmp/pg&port=5433", environment: noEnvironment)
        #expect(parameter.host == .socket(directory: "/tmp/pg", port: 5433))
        let bare = try PostgresSettings(url: "postgres:///d", environment: noEnvironment, osUser: "me")
        #expect(bare.host == .socket(directory: "/var/run/postgresql", port: 5432) && bare.user == "me")
    }

    @Test func environmentFillsWhatTheURLLeavesOut() throws {
        let environment = [
            "PGHOST": "pg.internal", "PGPORT": "6000", "PGUSER": "svc", "PGPASSWORD": "pw", "PGDATABASE": "prod", "PGSSLMODE": "disable",
        ]
        let settings = try PostgresSettings(url: "postgres://", environment: environment)
        #expect(settings.host == .tcp("pg.internal", port: 6000) && settings.user == "svc" && settings.password == "pw")
        #expect(settings.database == "prod" && settings.sslMode == .disable)
        let urlWins = try PostgresSettings(url: "postgres://ann:x@h:1/d?sslmode=require", environment: environment)
        #expect(urlWins.host == .tcp("h", port: 1) && urlWins.user == "ann" && urlWins.password == "x" && urlWins.sslMode == .require)
    }

    @Test func thePasswordFileIsReadOnlyWhenOnlyItsOwnerCanReadIt() throws {
        let scratch = try Scratch()
        let file = try scratch.write(
            "pgpass",
            """
            # comment
            other:5432:*:ann:wrong
            db.example:5432:app:ann:right\\:colon
            *:*:*:*:fallback
            """)
        chmod(file, 0o600)
        let environment = ["PGPASSFILE": file]
        #expect(try PostgresSettings(url: "postgres://ann@db.example/app", environment: environment).password == "right:colon")
        #expect(try PostgresSettings(url: "postgres://bob@elsewhere:1/x", environment: environment).password == "fallback")
        #expect(try PostgresSettings(url: "postgres://ann:given@db.example/app", environment: environment).password == "given")
        chmod(file, 0o644)
        let open = try PostgresSettings(url: "postgres://ann@db.example/app", environment: environment)
        #expect(open.password == nil)
        #expect(
            open.warnings == ["\(file): the password file can be read by its group or others, so it is ignored (as libpq does); chmod 0600 \(file)"])
    }

    /// `verify-ca` and `verify-full` take the root certificate from the URL, `PGSSLROOTCERT`, or libpq's
    /// `~/.postgresql/root.crt`, in that order.
    @Test func aVerifyingModeFindsItsRootCertificateAsLibpqDoes() throws {
        let scratch = try Scratch()
        #expect(throws: PostgresBackendError.self) {
            try PostgresSettings(url: "postgres://u@h/d?sslmode=verify-ca", environment: ["HOME": scratch.path])
        }
        try FileManager.default.createDirectory(atPath: scratch.file(".postgresql"), withIntermediateDirectories: true)
        let home = try scratch.write(".postgresql/root.crt", "a certificate")
        let ca = try PostgresSettings(url: "postgres://u@h/d?sslmode=verify-ca", environment: ["HOME": scratch.path])
        #expect(ca.sslMode == .verifyCA && ca.sslRootCert == home)
        let env = try PostgresSettings(
            url: "postgres://u@h/d", environment: ["HOME": scratch.path, "PGSSLMODE": "verify-full", "PGSSLROOTCERT": "/r.pem"])
        #expect(env.sslMode == .verifyFull && env.sslRootCert == "/r.pem")
        let url = try PostgresSettings(url: "postgres://u@h/d?sslmode=verify-full&sslrootcert=/u.pem", environment: ["PGSSLROOTCERT": "/r.pem"])
        #expect(url.sslRootCert == "/u.pem")
        #expect(try PostgresSettings(url: "postgres://u@h/d?sslmode=require", environment: ["HOME": scratch.path]).sslRootCert == nil)
    }

    /// `connect_timeout` and `application_name`, which connection strings handed out by hosting services often carry,
    /// read as libpq reads them (and from `PGCONNECT_TIMEOUT`, `PGAPPNAME`).
    @Test func aConnectTimeoutAndAnApplicationNameAreReadAsLibpqReadsThem() throws {
        let plain = try PostgresSettings(url: "postgres://u@h/d", environment: noEnvironment)
        #expect(plain.connectTimeout == .seconds(10) && plain.applicationName == "ferry")
        let given = try PostgresSettings(url: "postgres://u@h/d?connect_timeout=30&application_name=nightly%20backup", environment: noEnvironment)
        #expect(given.connectTimeout == .seconds(30) && given.applicationName == "nightly backup")
        #expect(try PostgresSettings(url: "postgres://u@h/d?connect_timeout=1", environment: noEnvironment).connectTimeout == .seconds(2))
        #expect(try PostgresSettings(url: "postgres://u@h/d?connect_timeout=0", environment: noEnvironment).connectTimeout > .seconds(86_400))
        let environment = ["PGCONNECT_TIMEOUT": "7", "PGAPPNAME": "sync"]
        let fromEnvironment = try PostgresSettings(url: "postgres://u@h/d", environment: environment)
        #expect(fromEnvironment.connectTimeout == .seconds(7) && fromEnvironment.applicationName == "sync")
        #expect {
            try PostgresSettings(url: "postgres://u@h/d?connect_timeout=soon", environment: noEnvironment)
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("connect_timeout soon is not a whole number of seconds") == true
        }
    }

    /// A client certificate and its key from the URL, the environment, or libpq's `~/.postgresql/postgresql.crt` and
    /// `.key`; one without the other is refused.
    @Test func aClientCertificateIsFoundAsLibpqFindsIt() throws {
        let scratch = try Scratch()
        let home = ["HOME": scratch.path]
        #expect(try PostgresSettings(url: "postgres://u@h/d", environment: home).sslCert == nil)
        try FileManager.default.createDirectory(atPath: scratch.file(".postgresql"), withIntermediateDirectories: true)
        let certificate = try scratch.write(".postgresql/postgresql.crt", "a certificate")
        let key = try scratch.write(".postgresql/postgresql.key", "a key")
        let found = try PostgresSettings(url: "postgres://u@h/d", environment: home)
        #expect(found.sslCert == certificate && found.sslKey == key)
        let given = try PostgresSettings(
            url: "postgres://u@h/d?sslcert=/c.pem&sslkey=/k.pem", environment: home.merging(["PGSSLCERT": "/e.pem"]) { $1 })
        #expect(given.sslCert == "/c.pem" && given.sslKey == "/k.pem")
        let fromEnvironment = try PostgresSettings(url: "postgres://u@h/d", environment: ["PGSSLCERT": "/e.pem", "PGSSLKEY": "/f.pem"])
        #expect(fromEnvironment.sslCert == "/e.pem" && fromEnvironment.sslKey == "/f.pem")
        for (url, message) in [
            ("postgres://u@h/d?sslcert=/c.pem", "needs its private key: add sslkey=PATH"),
            ("postgres://u@h/d?sslkey=/k.pem", "needs its client certificate: add sslcert=PATH"),
            ("postgres://u@h/d?sslmode=disable&sslcert=/c.pem&sslkey=/k.pem", "sslmode=disable sends no client certificate"),
        ] {
            #expect {
                try PostgresSettings(url: url, environment: noEnvironment)
            } throws: { error in
                (error as? PostgresBackendError)?.message.contains(message) == true
            }
        }
    }

    @Test func mistakesAreRefusedNamingThemAndNeverThePassword() throws {
        let secret = "hunter2-secret"
        let bad = [
            "postgres://u:\(secret)@h:99999/d": "port 99999 is not a number from 1 to 65535",
            "postgres://u:\(secret)@h/d?sslmod=require": "Ferry does not read the parameter sslmod",
            "postgres://u:\(secret)@h/d?sslmode=allow": "sslmode allow is not one Ferry supports",
            "postgres://u:\(secret)@h/d?schema=drop%20table": "schema drop table must be letters",
            "postgres://u:\(secret)@h/d?sslmode=verify-full": "sslmode=verify-full needs the server's root certificate",
            "mysql://u:\(secret)@h/d": "a PostgreSQL URL starts with postgres:// or postgresql://",
        ]
        for (url, message) in bad {
            #expect {
                try PostgresSettings(url: url, environment: noEnvironment)
            } throws: { error in
                guard let error = error as? PostgresBackendError else { return false }
                return error.code == .invalidURL && error.kind == .usage && error.message.contains(message) && !error.message.contains(secret)
                    && error.message.contains("****")
            }
        }
        #expect(PostgresSettings.redact("postgres://u@h/d?password=\(secret)&x=1") == "postgres://u@h/d?password=****&x=1")
    }
}
