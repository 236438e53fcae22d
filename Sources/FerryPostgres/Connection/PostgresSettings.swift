import FerryCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How to reach a PostgreSQL database, read as libpq reads it: a `postgres://` or `postgresql://` URL, then the
/// `PG*` environment variables for what it leaves out, then the password file.
///
/// The password is kept for connecting and never shown: ``description`` and ``redactedURL`` write `****` instead.
public struct PostgresSettings: Sendable, Hashable, CustomStringConvertible {
    /// Where the server listens.
    public enum Host: Sendable, Hashable {
        /// A host name or address, and a port.
        case tcp(String, port: Int)
        /// The directory of a Unix-domain socket, and the port that names the socket file (`.s.PGSQL.<port>`).
        case socket(directory: String, port: Int)

        /// The socket file's path, for a socket host.
        public var socketPath: String? {
            if case .socket(let directory, let port) = self { return "\(directory)/.s.PGSQL.\(port)" }
            return nil
        }
    }

    /// How the connection is encrypted (`sslmode`).
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS if the server offers it, else plain (libpq's default).
        case prefer
        /// TLS, without checking the server's certificate.
        case require
        /// TLS, with the certificate checked against the root (`sslrootcert`), not the host name.
        case verifyCA = "verify-ca"
        /// TLS, with the certificate checked against the root (`sslrootcert`) and the host name.
        case verifyFull = "verify-full"

        /// Whether the server's certificate is checked against a root.
        public var verifies: Bool { self == .verifyCA || self == .verifyFull }
    }

    /// The server.
    public var host: Host
    /// The role.
    public var user: String
    /// The password, if one was given (URL, `PGPASSWORD`) or found in the password file.
    public var password: String?
    /// The database.
    public var database: String
    /// TLS.
    public var sslMode: SSLMode
    /// The root certificate for `verify-ca` and `verify-full` (`sslrootcert`, `PGSSLROOTCERT`, else libpq's
    /// `~/.postgresql/root.crt` when it exists).
    public var sslRootCert: String?
    /// Ferry's schema in the database (`?schema=`, default `ferry`).
    public var schema: String
    /// What reading the settings noticed that the user should know (a password file others can read, ignored).
    public var warnings: [String] = []
    /// How long to wait for a connection: `connect_timeout` (seconds; 0 waits as long as it takes, under 2 counts as
    /// 2, as in libpq) or `PGCONNECT_TIMEOUT`; 10 s when neither says.
    public var connectTimeout: Duration = .seconds(10)
    /// The name Ferry's connections have in `pg_stat_activity`: `application_name` or `PGAPPNAME`, else `ferry`.
    public var applicationName = "ferry"
    /// The client certificate (PEM) a server may ask for: `sslcert`, `PGSSLCERT`, else libpq's
    /// `~/.postgresql/postgresql.crt` when it exists.
    public var sslCert: String?
    /// The client certificate's private key (unencrypted PEM, readable by its owner alone): `sslkey`, `PGSSLKEY`, else
    /// `~/.postgresql/postgresql.key`.
    public var sslKey: String?
    /// Whether connections carry Ferry's session settings (timeouts off, read committed) in their startup message;
    /// off once a pooler in front of the server refused them (PgBouncer accepts only a few parameters there).
    package var sessionSettingsAtStartup = true

    /// The URL parameters Ferry reads; any other is refused rather than ignored.
    public static let acceptedParameters = [
        "sslmode", "sslrootcert", "sslcert", "sslkey", "schema", "host", "port", "user", "dbname", "password", "connect_timeout",
        "application_name",
    ]

    /// Reads a connection URL.
    /// - Parameters:
    ///   - environment: the process's environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`,
    ///     `PGSSLMODE`, `PGSSLROOTCERT`, `PGPASSFILE`, `HOME`).
    ///   - osUser: the user name when neither the URL nor `PGUSER` gives one.
    /// - Throws: ``PostgresBackendError`` `invalid-url`, naming what is wrong and never the password.
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment, osUser: String? = nil) throws {
        let shown = Self.redact(url)
        let scheme: Substring
        if url.hasPrefix("postgres://") {
            scheme = "postgres://"
        } else if url.hasPrefix("postgresql://") {
            scheme = "postgresql://"
        } else {
            throw PostgresBackendError(.invalidURL, "\(shown): a PostgreSQL URL starts with postgres:// or postgresql://")
        }
        var rest = url.dropFirst(scheme.count)
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var userPart: Substring?
        var hostPart = rest
        if let at = rest.lastIndex(of: "@") {
            userPart = rest[..<at]
            hostPart = rest[rest.index(after: at)...]
        }
        func decode(_ text: Substring, _ what: String) throws -> String {
            guard let decoded = String(text).removingPercentEncoding else {
                throw PostgresBackendError(.invalidURL, "\(shown): the \(what) is not valid percent-encoding")
            }
            return decoded
        }
        var user: String?
        var password: String?
        if let userPart {
            if let colon = userPart.firstIndex(of: ":") {
                user = try decode(userPart[..<colon], "user name")
                password = try decode(userPart[userPart.index(after: colon)...], "password")
            } else {
                user = try decode(userPart, "user name")
            }
        }
        var hostName: String?
        var port: Int?
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { throw PostgresBackendError(.invalidURL, "\(shown): an IPv6 address needs its ]") }
            hostName = String(hostPart[hostPart.index(after: hostPart.startIndex)..<close])
            let after = hostPart[hostPart.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst(), shown: shown) }
        } else if let colon = hostPart.lastIndex(of: ":") {
            hostName = try decode(hostPart[..<colon], "host")
            port = try Self.port(hostPart[hostPart.index(after: colon)...], shown: shown)
        } else if !hostPart.isEmpty {
            hostName = try decode(hostPart, "host")
        }
        var database = path.isEmpty ? nil : try decode(path, "database name")
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try decode(parts[0], "parameter name")
            guard Self.acceptedParameters.contains(key) else {
                throw PostgresBackendError(
                    .invalidURL, "\(shown): Ferry does not read the parameter \(key); it reads \(Self.acceptedParameters.joined(separator: ", "))")
            }
            parameters[key] = parts.count > 1 ? try decode(parts[1], "value of \(key)") : ""
        }
        if let value = parameters["host"] { hostName = value }
        if let value = parameters["port"] { port = try Self.port(Substring(value), shown: shown) }
        if let value = parameters["user"] { user = value }
        if let value = parameters["dbname"] { database = value }
        if let value = parameters["password"] { password = value }
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let resolvedPort = try port ?? env("PGPORT").map { try Self.port(Substring($0), shown: "PGPORT") } ?? 5432
        let resolvedHost = hostName.flatMap { $0.isEmpty ? nil : $0 } ?? env("PGHOST") ?? "/var/run/postgresql"
        self.host = resolvedHost.hasPrefix("/") ? .socket(directory: resolvedHost, port: resolvedPort) : .tcp(resolvedHost, port: resolvedPort)
        let resolvedUser = user.flatMap { $0.isEmpty ? nil : $0 } ?? env("PGUSER") ?? osUser ?? Self.currentUser()
        self.user = resolvedUser
        self.database = database.flatMap { $0.isEmpty ? nil : $0 } ?? env("PGDATABASE") ?? resolvedUser
        let mode = parameters["sslmode"] ?? env("PGSSLMODE") ?? "prefer"
        guard let sslMode = SSLMode(rawValue: mode) else {
            throw PostgresBackendError(
                .invalidURL, "\(shown): sslmode \(mode) is not one Ferry supports; use \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.sslMode = sslMode
        // libpq's files in ~/.postgresql, where neither the URL nor the environment names one.
        let home = env("HOME")
        func existing(_ name: String) -> String? {
            home.map { "\($0)/.postgresql/\(name)" }.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
        }
        sslRootCert = parameters["sslrootcert"] ?? env("PGSSLROOTCERT") ?? (sslMode.verifies ? existing("root.crt") : nil)
        let schema = parameters["schema"] ?? "ferry"
        guard Self.isPlainIdentifier(schema) else {
            throw PostgresBackendError(.invalidURL, "\(shown): schema \(schema) must be letters, digits and _, starting with a letter or _")
        }
        self.schema = schema
        if let text = parameters["connect_timeout"] ?? env("PGCONNECT_TIMEOUT") {
            guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw PostgresBackendError(.invalidURL, "\(shown): connect_timeout \(text) is not a whole number of seconds")
            }
            // libpq waits as long as it takes for 0 (or less), and at least 2 s otherwise.
            connectTimeout = seconds <= 0 ? .seconds(365 * 86_400) : .seconds(max(seconds, 2))
        }
        if let name = parameters["application_name"] ?? env("PGAPPNAME") { applicationName = name }
        sslCert = parameters["sslcert"] ?? env("PGSSLCERT") ?? existing("postgresql.crt")
        sslKey = parameters["sslkey"] ?? env("PGSSLKEY") ?? (sslCert == nil ? nil : existing("postgresql.key"))
        if sslCert != nil && sslKey == nil {
            throw PostgresBackendError(.invalidURL, "\(shown): the client certificate \(sslCert ?? "") needs its private key: add sslkey=PATH")
        }
        if let key = sslKey, sslCert == nil {
            throw PostgresBackendError(.invalidURL, "\(shown): the private key \(key) needs its client certificate: add sslcert=PATH")
        }
        if sslMode == .disable, let cert = sslCert, parameters["sslcert"] != nil || env("PGSSLCERT") != nil {
            throw PostgresBackendError(
                .invalidURL, "\(shown): sslmode=disable sends no client certificate (\(cert)); use sslmode=require or stronger")
        }
        if sslMode.verifies && sslRootCert == nil {
            throw PostgresBackendError(
                .invalidURL,
                "\(shown): sslmode=\(sslMode.rawValue) needs the server's root certificate: add sslrootcert=PATH, or put it in "
                    + "~/.postgresql/root.crt")
        }
        self.password = password ?? env("PGPASSWORD")
        if self.password == nil {
            let file = env("PGPASSFILE") ?? env("HOME").map { "\($0)/.pgpass" }
            if let file { self.password = PasswordFile.lookup(file, settings: self, warnings: &warnings) }
        }
    }

    private static func port(_ text: Substring, shown: String) throws -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw PostgresBackendError(.invalidURL, "\(shown): port \(text) is not a number from 1 to 65535")
        }
        return port
    }

    /// Whether `text` is an identifier SQL takes unquoted (letters, digits and `_`, not starting with a digit), which
    /// Ferry writes into statements as it is.
    public static func isPlainIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && CharacterSet.letters.contains(first)) else {
            return false
        }
        return text.count <= 63 && text.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || CharacterSet.alphanumerics.contains($0)) }
    }

    private static func currentUser() -> String {
        #if canImport(Glibc)
            if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        #endif
        return ProcessInfo.processInfo.environment["USER"] ?? "postgres"
    }

    /// The URL as given, with its password shown as `****`.
    public static func redact(_ url: String) -> String { URLRedaction.redacted(url) }

    /// The settings as a URL, the password left out: for messages and manifests.
    public var redactedURL: String {
        switch host {
        case .tcp(let name, let port):
            let hostText = (name.contains(":") ? "[\(name)]" : name) + ":\(port)"
            return "postgres://\(user)@\(hostText)/\(database)" + (schema == "ferry" ? "" : "?schema=\(schema)")
        case .socket(let directory, let port):
            return "postgres://\(user)@/\(database)?host=\(directory)&port=\(port)" + (schema == "ferry" ? "" : "&schema=\(schema)")
        }
    }

    public var description: String { redactedURL }
}
