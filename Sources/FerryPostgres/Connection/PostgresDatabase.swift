import FerryCore
import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// A connection pool to one PostgreSQL database, running while it is open.
///
/// Opening checks that the server answers, so a copy fails before it reads anything when the server is down, the
/// credentials are wrong or the database is missing; every error names the server (never the password) and says how
/// to fix it (``PostgresBackendError``).
public final class PostgresDatabase: Sendable {
    /// Where it connects.
    public let settings: PostgresSettings
    let client: PostgresClient
    private let runner: Task<Void, Never>
    let logger: Logger

    private init(settings: PostgresSettings, client: PostgresClient, runner: Task<Void, Never>, logger: Logger) {
        self.settings = settings
        self.client = client
        self.runner = runner
        self.logger = logger
    }

    /// Connects, and checks the server answers.
    /// - Throws: ``PostgresBackendError``: `unavailable` (69), `authentication` or `permission` (77), `invalid-url` (a root
    ///   certificate that cannot be read).
    public static func open(_ settings: PostgresSettings, logger: Logger = Logger(label: "ferry.postgres")) async throws -> PostgresDatabase {
        // One connection first: the pool retries a failing server until its breaker trips and hides why it failed.
        try await probe(settings, logger: logger)
        let client = PostgresClient(configuration: try configuration(settings), backgroundLogger: logger)
        // The pool serves only once run() has begun: wait for its task to start it.
        let runner = await withCheckedContinuation { (started: CheckedContinuation<Task<Void, Never>, Never>) in
            let started = StartSignal(started)
            let task = Task {
                started.resume()
                await client.run()
            }
            started.set(task)
        }
        await Task.yield()
        return PostgresDatabase(settings: settings, client: client, runner: runner, logger: logger)
    }

    /// Connects once, runs `SELECT 1` and disconnects, so that a server that is down, credentials that are refused or
    /// a database that is missing are reported at once, with the server's reason.
    private static func probe(_ settings: PostgresSettings, logger: Logger) async throws {
        var configuration: PostgresConnection.Configuration
        switch settings.host {
        case .socket:
            configuration = PostgresConnection.Configuration(
                unixSocketPath: settings.host.socketPath ?? "", username: settings.user, password: settings.password, database: settings.database)
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            switch Self.tls(settings) {
            case .disable: tls = .disable
            case let mode:
                do {
                    let context = try NIOSSLContext(configuration: try Self.tlsConfiguration(settings))
                    tls = mode.isRequired ? .require(context) : .prefer(context)
                } catch let error as PostgresBackendError {
                    throw error
                } catch {
                    throw PostgresBackendError(.invalidURL, "\(settings): cannot set up TLS: \(error)", cause: error)
                }
            }
            configuration = PostgresConnection.Configuration(
                host: host, port: port, username: settings.user, password: settings.password, database: settings.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(10)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            throw translate(error, settings: settings)
        }
        do {
            _ = try await connection.query("SELECT 1", logger: logger)
        } catch {
            try? await connection.close()
            throw translate(error, settings: settings)
        }
        try? await connection.close()
    }

    private static func configuration(_ settings: PostgresSettings) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch settings.host {
        case .socket:
            configuration = PostgresClient.Configuration(
                unixSocketPath: settings.host.socketPath ?? "", username: settings.user, password: settings.password, database: settings.database)
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS
            switch Self.tls(settings) {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try tlsConfiguration(settings))
            case .require: tls = .require(try tlsConfiguration(settings))
            }
            configuration = PostgresClient.Configuration(
                host: host, port: port, username: settings.user, password: settings.password, database: settings.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(10)
        configuration.options.maximumConnections = 8
        return configuration
    }

    /// How TLS is used, by `sslmode`.
    private enum TLSMode {
        case disable, prefer, require

        var isRequired: Bool { self == .require }
    }

    private static func tls(_ settings: PostgresSettings) -> TLSMode {
        switch settings.sslMode {
        case .disable: .disable
        case .prefer: .prefer
        case .require, .verifyFull: .require
        }
    }

    /// TLS as libpq does it: `prefer` and `require` encrypt without checking the certificate, `verify-full` checks it
    /// against the root certificate and the host name.
    private static func tlsConfiguration(_ settings: PostgresSettings) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        guard settings.sslMode == .verifyFull else {
            tls.certificateVerification = .none
            return tls
        }
        tls.certificateVerification = .fullVerification
        guard let path = settings.sslRootCert else {
            throw PostgresBackendError(.invalidURL, "\(settings): sslmode=verify-full needs sslrootcert=PATH")
        }
        do {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
        } catch {
            throw PostgresBackendError(.invalidURL, "\(path): cannot read the root certificate (sslrootcert) as PEM: \(error)", cause: error)
        }
        return tls
    }

    /// Runs a statement, discarding any rows.
    public func execute(_ query: PostgresQuery) async throws {
        do {
            _ = try await client.query(query, logger: logger)
        } catch {
            throw translate(error)
        }
    }

    /// Runs a query and hands each row to `body`.
    package func query(_ query: PostgresQuery, _ body: (PostgresRow) throws -> Void) async throws {
        do {
            for try await row in try await client.query(query, logger: logger) { try body(row) }
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw translate(error)
        }
    }

    /// Runs `body` on one connection, inside a transaction it commits when `body` returns and rolls back when it throws.
    func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw translate(error)
        }
    }

    /// Ends the pool; the database must not be used afterwards.
    public func close() async {
        runner.cancel()
        await runner.value
    }

    /// Starts ending the pool without waiting for it (where nothing can wait: a deinit).
    public func shutDown() { runner.cancel() }

    /// A PostgresNIO error as a ``PostgresBackendError`` that names the server and says what to do.
    func translate(_ error: any Error) -> PostgresBackendError { Self.translate(error, settings: settings) }

    static func translate(_ error: any Error, settings: PostgresSettings) -> PostgresBackendError {
        let server = settings.description
        let place: String
        switch settings.host {
        case .tcp(let host, let port): place = "\(host) port \(port)"
        case .socket: place = "the socket \(settings.host.socketPath ?? "")"
        }
        let unreachable = PostgresBackendError(
            .unavailable, "\(server): cannot connect to \(place); is the server running and accepting connections there?", cause: error)
        guard let psql = error as? PSQLError else { return unreachable }
        if let underlying = psql.underlying, String(reflecting: type(of: underlying)).contains("SSL") {
            return PostgresBackendError(
                .unavailable,
                "\(server): TLS with the server failed (sslmode=\(settings.sslMode.rawValue)"
                    + (settings.sslRootCert.map { ", sslrootcert=\($0)" } ?? "") + "): \(underlying); check that the root certificate is the "
                    + "server's and names this host", cause: error)
        }
        switch psql.code {
        case .server:
            let state = psql.serverInfo?[.sqlState] ?? ""
            let message = psql.serverInfo?[.message] ?? "\(psql.code)"
            switch state {
            case "28P01", "28000":
                return PostgresBackendError(
                    .authentication,
                    "\(server): the server refused the credentials for role \(settings.user) (\(message)); check the password "
                        + "(URL, PGPASSWORD or ~/.pgpass) and pg_hba.conf", cause: error)
            case "42501":
                return PostgresBackendError(
                    .permission, "\(server): permission denied: \(message); grant the role \(settings.user) what it needs (\(state))",
                    cause: error)
            case "3D000":
                return PostgresBackendError(
                    .unavailable, "\(server): \(message); create it (createdb \(settings.database)) or name another database",
                    cause: error)
            default:
                return PostgresBackendError(.server, "\(server): the server said \(message) (SQLSTATE \(state))", cause: error)
            }
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return unreachable
        case .sslUnsupported:
            return PostgresBackendError(
                .unavailable, "\(server): the server does not offer TLS, which sslmode=\(settings.sslMode.rawValue) requires", cause: error)
        default:
            return PostgresBackendError(.server, "\(server): \(psql.code)", cause: error)
        }
    }
}

/// Hands the pool's task to the opener once the task has begun.
private final class StartSignal: @unchecked Sendable {
    // @unchecked: `set` and `resume` each run once; the lock orders them.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Task<Void, Never>, Never>?
    private var task: Task<Void, Never>?
    private var begun = false

    init(_ continuation: CheckedContinuation<Task<Void, Never>, Never>) { self.continuation = continuation }

    func set(_ task: Task<Void, Never>) {
        lock.withLock {
            self.task = task
            resumeIfReady()
        }
    }

    func resume() {
        lock.withLock {
            begun = true
            resumeIfReady()
        }
    }

    private func resumeIfReady() {
        guard begun, let task, let continuation else { return }
        self.continuation = nil
        continuation.resume(returning: task)
    }
}
