import FerryCore
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

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
    /// What opening noticed that the user should know (a pooler that refused Ferry's session settings).
    public let warnings: [String]

    private init(
        settings: PostgresSettings, client: PostgresClient, runner: Task<Void, Never>, logger: Logger, retries: Retries, warnings: [String]
    ) {
        self.warnings = warnings
        self.retries = retries
        self.settings = settings
        self.client = client
        self.runner = runner
        self.logger = logger
    }

    /// Connects, and checks the server answers.
    /// - Throws: ``PostgresBackendError``: `unavailable` (69), `authentication` or `permission` (77), `invalid-url` (a root
    ///   certificate that cannot be read).
    public static func open(_ settings: PostgresSettings, logger: Logger = Logger(label: "ferry.postgres"), retries: Retries = Retries())
        async throws -> PostgresDatabase
    {
        // One connection first: the pool retries a failing server until its breaker trips and hides why it failed.
        var settings = settings
        var warnings: [String] = []
        do {
            try await probe(settings, logger: logger)
        } catch let error as PostgresBackendError where error.sqlState == "08P01" && error.serverMessage.contains("startup parameter") {
            // A pooler (PgBouncer takes only a few parameters at startup): connect without the session settings, and say so.
            settings.sessionSettingsAtStartup = false
            try await probe(settings, logger: logger)
            warnings.append(
                "\(settings): the server, or a pooler in front of it, refused session settings at connection (\(error.serverMessage)): Ferry "
                    + "connects without them, so the role's own statement_timeout, lock_timeout, idle_in_transaction_session_timeout and "
                    + "default_transaction_isolation apply to its statements; turn them off for this role, or let the pooler ignore them "
                    + "(PgBouncer: ignore_startup_parameters)")
        }
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
        return PostgresDatabase(settings: settings, client: client, runner: runner, logger: logger, retries: retries, warnings: warnings)
    }

    /// Connects once, runs `SELECT 1` and disconnects, so that a server that is down, credentials that are refused or
    /// a database that is missing are reported at once, with the server's reason.
    private static func probe(_ settings: PostgresSettings, logger: Logger, timeout: Duration? = nil) async throws {
        let connection = try await connect(settings, logger: logger, timeout: timeout)
        do {
            _ = try await connection.query("SELECT 1", logger: logger)
        } catch {
            try? await connection.close()
            throw translate(error, settings: settings)
        }
        try? await connection.close()
    }

    /// A connection of its own, outside the pool (for session-level locks, which live as long as their connection).
    func dedicatedConnection() async throws -> PostgresConnection { try await Self.connect(settings, logger: logger) }

    private static func connect(_ settings: PostgresSettings, logger: Logger, timeout: Duration? = nil) async throws
        -> PostgresConnection
    {
        let timeout = timeout ?? settings.connectTimeout
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
        configuration.options.additionalStartupParameters = Self.startupParameters(settings)
        configuration.options.connectTimeout = .nanoseconds(
            Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            throw translate(error, settings: settings)
        }
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
        configuration.options.connectTimeout = settings.connectTimeout
        configuration.options.maximumConnections = 8
        configuration.options.additionalStartupParameters = Self.startupParameters(settings)
        return configuration
    }

    /// The settings every connection starts its session with.
    ///
    /// A setting in the startup message outranks `ALTER ROLE … SET` and `ALTER DATABASE … SET`. Each connection:
    /// - is named `ferry` (or the URL's `application_name`) in `pg_stat_activity`, and in the message a copy waiting
    ///   for another's zone gives;
    /// - sends and reads text as UTF-8, which is what Ferry writes and decodes (postgres-nio sets no `client_encoding`,
    ///   so a role's or a database's own, LATIN1 say, turned each non-ASCII character into two, silently);
    /// - writes read committed, as Ferry's statements are written for, with standard string literals;
    /// - as `pg_dump`'s and `pg_restore`'s, takes no timeout meant for an application's queries: a round's `COPY`, an
    ///   index built at the end of a load, a wait for another copy's zone and a snapshot read while a bundle is written
    ///   run as long as they need (Ferry's own `SET LOCAL lock_timeout` still apply).
    private static func startupParameters(_ settings: PostgresSettings) -> [(String, String)] {
        // What PgBouncer takes at startup too; the rest only where the server (or pooler) took it.
        let always = [("application_name", settings.applicationName), ("client_encoding", "UTF8"), ("standard_conforming_strings", "on")]
        guard settings.sessionSettingsAtStartup else { return always }
        return always + [
            ("default_transaction_isolation", "read committed"), ("statement_timeout", "0"), ("lock_timeout", "0"),
            ("idle_in_transaction_session_timeout", "0"),
        ]
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
        case .require, .verifyCA, .verifyFull: .require
        }
    }

    /// TLS as libpq does it: `prefer` and `require` encrypt without checking the certificate, `verify-ca` checks it
    /// against the root certificate, `verify-full` against the root certificate and the host name.
    private static func tlsConfiguration(_ settings: PostgresSettings) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let certificate = settings.sslCert, let key = settings.sslKey { try clientCertificate(certificate, key: key, into: &tls) }
        guard settings.sslMode.verifies else {
            tls.certificateVerification = .none
            return tls
        }
        tls.certificateVerification = settings.sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
        guard let path = settings.sslRootCert else {
            throw PostgresBackendError(.invalidURL, "\(settings): sslmode=\(settings.sslMode.rawValue) needs sslrootcert=PATH")
        }
        do {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
        } catch {
            throw PostgresBackendError(.invalidURL, "\(path): cannot read the root certificate (sslrootcert) as PEM: \(error)", cause: error)
        }
        return tls
    }

    /// Adds a client certificate and its private key (PEM files) to `tls`; as libpq requires, the key is readable by its
    /// owner alone (or also by its group, when root owns it).
    private static func clientCertificate(_ certificate: String, key: String, into tls: inout TLSConfiguration) throws {
        if let mode = PrivateFile.openMode(key, rootsGroupMayRead: true) {
            throw PostgresBackendError(
                .permission,
                "\(key): the private key can be read by others than its owner (mode \(String(mode, radix: 8))); chmod 0600 \(key) "
                    + "(0640 for a key root owns), as libpq also requires")
        }
        do {
            tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
        } catch {
            throw PostgresBackendError(.invalidURL, "\(certificate): cannot read the client certificate (sslcert) as PEM: \(error)", cause: error)
        }
        do {
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
        } catch {
            throw PostgresBackendError(
                .invalidURL, "\(key): cannot read the private key (sslkey) as an unencrypted PEM key: \(error)", cause: error)
        }
    }

    /// What to tell someone about to write into this database about its text encoding: `nil` for UTF-8, which holds
    /// any record; a sentence for another (each record with a character it cannot hold is rejected by the server).
    public func textEncodingWarning() async throws -> String? {
        let encoding = try await rows("SHOW server_encoding").first?.decode(String.self) ?? "UTF8"
        switch encoding.uppercased() {
        case "UTF8", "UNICODE": return nil
        case "SQL_ASCII":
            return "\(settings): database \(settings.database) stores text unchecked (encoding SQL_ASCII): Ferry writes UTF-8, but other "
                + "clients and ferry pg-views may read non-ASCII characters differently; a UTF8 database (createdb -E UTF8) holds every record"
        default:
            return "\(settings): database \(settings.database) stores text as \(encoding): a record with a character \(encoding) cannot hold "
                + "is rejected (the reject file names it and the character); a UTF8 database (createdb -E UTF8) holds every record"
        }
    }

    /// Runs a statement, discarding any rows.
    public func execute(_ query: PostgresQuery) async throws {
        try await onConnection { [logger] connection in _ = try await connection.query(query, logger: logger) }
    }

    /// The rows of a query, once it has run to its end (so a query sent again after a lost connection never gives a
    /// row twice).
    package func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await onConnection { [logger] connection in try await connection.query(query, logger: logger).collect() }
    }

    /// Runs a query and hands each of its rows (``rows(_:)``) to `body`.
    package func query(_ query: PostgresQuery, _ body: (PostgresRow) throws -> Void) async throws {
        let rows = try await rows(query)
        do {
            for row in rows { try body(row) }
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw translate(error)
        }
    }

    /// Runs `body` on one connection, inside a transaction it commits when `body` returns and rolls back when it throws.
    ///
    /// When the connection is lost, `body` runs again in a new transaction (the lost one left nothing).
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await onConnection { [logger] connection in try await Self.inTransaction(on: connection, logger: logger, body) }
    }

    /// Runs `body` in a transaction on a connection of its own, begun once that connection holds the session advisory
    /// lock `turn`: one such transaction per `turn` at a time, across every process.
    ///
    /// The lock is taken before the transaction begins, so that the transaction sees what the one before it committed
    /// (a backend brings its caches of names up to date when a transaction begins, not when it takes an advisory lock).
    /// Closing the connection lets go of the lock.
    func transaction<Result: Sendable>(inTurnOf turn: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result)
        async throws -> Result
    {
        let connection = try await dedicatedConnection()
        do {
            for try await _ in try await connection.query("SELECT pg_advisory_lock(hashtext(\(turn)))", logger: logger) {}
            let result = try await Self.inTransaction(on: connection, logger: logger, body)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            if let error = error as? any FerryError { throw error }
            throw translate(error)
        }
    }

    /// Runs `body` on `connection` inside a transaction it commits when `body` returns and rolls back when it throws.
    private static func inTransaction<Result: Sendable>(
        on connection: PostgresConnection, logger: Logger, _ body: @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
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

    /// Runs `body` on a connection of the pool, watched and tried again when the connection is lost (``resilient(_:)``).
    private func onConnection<Result: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await resilient { [client] watch in
            try await client.withConnection { connection in
                watch.connection = connection
                return try await body(connection)
            }
        }
    }

    /// How often an operation whose connection was lost is tried again, the first wait, and the longest.
    ///
    /// Waits double from `firstWait`; with the defaults a server gets about a minute to come back.
    public struct Retries: Sendable {
        /// Attempts after the first.
        public var count = 5
        /// The wait before the first retry.
        public var firstWait = Duration.seconds(2)
        /// The longest wait between attempts.
        public var longestWait = Duration.seconds(30)
        /// How long an operation may wait without the server answering a check before its connection counts as lost.
        public var watchInterval = Duration.seconds(5)
        /// Told of each retry, with what was lost and when it is tried again (else the logger's warning).
        public var onRetry: (@Sendable (String) -> Void)?

        /// The defaults.
        public init() {}
    }

    /// How operations whose connection was lost are retried.
    public let retries: Retries
    /// Whether an operation lost its connection and none has succeeded since: meanwhile a server that cannot be
    /// reached is that loss, not a server that was never there (75, not 69).
    private let connectionLost = Mutex(false)

    /// Runs an operation on the pool; when the connection is lost (an error of the connection, the server shutting
    /// down, or no answer to a check on a connection of its own while the operation waits), waits and runs it again,
    /// `retries.count` times, then fails with `interrupted` (75).
    private func resilient<Result: Sendable>(_ operation: @escaping @Sendable (OperationWatch) async throws -> Result) async throws -> Result {
        var attempt = 0
        while true {
            let failure: any Error
            do {
                let result = try await watched(operation)
                connectionLost.withLock { $0 = false }
                return result
            } catch let error as PostgresBackendError {
                guard error.code == .connectionLost || (error.code == .unavailable && connectionLost.withLock { $0 }) else { throw error }
                failure = error.cause ?? error
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as any FerryError {
                // Thrown by the operation itself (a record it refuses, an asset stream from another source that is
                // damaged): not the server's doing, so said as it is rather than as a server that cannot be reached.
                throw error
            } catch {
                if !Self.losesConnection(error) {
                    let translated = translate(error)
                    guard translated.code == .unavailable, connectionLost.withLock({ $0 }) else { throw translated }
                }
                failure = error
            }
            connectionLost.withLock { $0 = true }
            attempt += 1
            guard attempt <= retries.count else {
                throw PostgresBackendError(
                    .interrupted,
                    "\(settings): the connection to the server was lost and did not come back after \(retries.count) attempts "
                        + "(\(Self.describe(failure))); run the same command again once the server is back: a copy resumes where it stopped",
                    cause: failure)
            }
            let wait = min(retries.firstWait * (1 << min(attempt - 1, 16)), retries.longestWait)
            let message =
                "\(settings): lost the connection to the server (\(Self.describe(failure))); trying again in \(wait) (attempt \(attempt) of \(retries.count))"
            if let onRetry = retries.onRetry { onRetry(message) } else { logger.warning("\(message)") }
            try await Task.sleep(for: wait)
        }
    }

    /// Runs an operation while checking, every `watchInterval` it takes, that its connection is open, or, while it
    /// waits for one, that the server answers on a connection of its own.
    ///
    /// The pool waits for a connection as long as the server is down, and an operation on a connection the network
    /// dropped may never hear of it: either is abandoned (its task cancelled and left behind) as a lost connection.
    private func watched<Result: Sendable>(_ operation: @escaping @Sendable (OperationWatch) async throws -> Result) async throws -> Result {
        let watch = OperationWatch()
        let outcome = OperationOutcome<Result>()
        let (settings, logger, retries) = (self.settings, self.logger, self.retries)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                outcome.await(continuation)
                let work = Task {
                    do {
                        outcome.finish(.success(try await operation(watch)))
                    } catch {
                        outcome.finish(.failure(error))
                    }
                }
                let watcher = Task {
                    while !outcome.isFinished {
                        try await Task.sleep(for: retries.watchInterval)
                        if outcome.isFinished { return }
                        let lost: (any Error)?
                        if let connection = watch.connection {
                            lost =
                                connection.isClosed
                                ? PostgresBackendError(.connectionLost, "\(settings): the connection closed under an operation") : nil
                        } else {
                            do {
                                try await Self.probe(settings, logger: logger, timeout: retries.watchInterval)
                                lost = nil
                            } catch {
                                lost = PostgresBackendError(.connectionLost, "\(settings): the server does not answer", cause: error)
                            }
                        }
                        if let lost {
                            outcome.finish(.failure(lost))
                            work.cancel()
                            return
                        }
                    }
                }
                outcome.onFinish { watcher.cancel() }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// Whether an error means the connection was lost, not that the server refused a statement.
    static func losesConnection(_ error: any Error) -> Bool {
        if let error = error as? PostgresBackendError { return error.code == .connectionLost }
        guard let psql = error as? PSQLError else { return false }
        switch psql.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown: return true
        case .server:
            // Connection exceptions, and the server shutting down or starting up.
            let state = psql.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        default: return false
        }
    }

    /// An error in a few words, for the retry messages and as a cause (``ExplainedError``).
    static func describe(_ error: any Error) -> String {
        if let decoding = error as? PostgresDecodingError {
            return
                "column \(decoding.columnName) holds \(decoding.postgresType), which Ferry does not read as \(decoding.targetType) (\(decoding.code))"
        }
        guard let psql = error as? PSQLError else { return "\(error)" }
        return psql.serverInfo?[.message] ?? "\(psql.code)"
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
        if error is PostgresDecodingError {
            return PostgresBackendError(
                .server,
                "\(server): \(describe(error)); schema \(settings.schema) was changed outside Ferry: check it with ferry verify, or copy into a new "
                    + "schema", cause: error)
        }
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
            let hint = psql.serverInfo?[.hint]
            switch state {
            case "28P01", "28000":
                let advice =
                    message.contains("certificate")
                    ? "give the client certificate the server expects (sslcert=PATH&sslkey=PATH, or ~/.postgresql/postgresql.crt and .key)"
                    : "check the password (URL, PGPASSWORD or ~/.pgpass)"
                return PostgresBackendError(
                    .authentication,
                    "\(server): the server refused the credentials for role \(settings.user) (\(message)); \(advice) and pg_hba.conf",
                    cause: error)
            case "42501":
                return PostgresBackendError(
                    .permission, "\(server): permission denied: \(message); grant the role \(settings.user) what it needs (\(state))",
                    cause: error)
            case "3D000":
                return PostgresBackendError(
                    .unavailable, "\(server): \(message); create it (createdb \(settings.database)) or name another database",
                    cause: error)
            case "25006":
                return PostgresBackendError(
                    .readOnly,
                    "\(server): the server takes no writes here (\(message)): it is a standby, or default_transaction_read_only is on "
                        + "for role \(settings.user) or database \(settings.database); copy into the primary, or turn the setting off",
                    cause: error)
            case "53300":
                return PostgresBackendError(
                    .resources,
                    "\(server): the server has no connection to spare (\(message)): lower --parallel, raise max_connections or the "
                        + "role's connection limit, or run the same command again later (a copy resumes where it stopped)", cause: error)
            case "53100":
                return PostgresBackendError(
                    .resources,
                    "\(server): the server's disk is full (\(message)); nothing of the round under way was kept: free space on the "
                        + "server, then run the same command again (a copy resumes where it stopped)", cause: error)
            case let state where state.hasPrefix("53"):
                return PostgresBackendError(
                    .resources,
                    "\(server): the server ran out of resources (\(message)\(hint.map { "; \($0)" } ?? ""), SQLSTATE \(state)); run the "
                        + "same command again once it has room (a copy resumes where it stopped)", cause: error)
            default:
                return PostgresBackendError(
                    .server, "\(server): the server said \(message)\(hint.map { " (\($0))" } ?? "") (SQLSTATE \(state))", cause: error)
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

/// The connection an operation runs on, for the watch that checks it is open.
final class OperationWatch: @unchecked Sendable {
    // @unchecked: `connection` is guarded by the lock.
    private let lock = NSLock()
    private var current: PostgresConnection?

    var connection: PostgresConnection? {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}

/// The outcome of a watched operation: the first of its result, its watch's verdict and a cancellation resumes the
/// waiting caller; the others are dropped.
private final class OperationOutcome<Result: Sendable>: @unchecked Sendable {
    // @unchecked: every property is guarded by the lock.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result, any Error>?
    private var early: Swift.Result<Result, any Error>?
    private var finished = false
    private var finishers: [@Sendable () -> Void] = []

    var isFinished: Bool { lock.withLock { finished } }

    func await(_ continuation: CheckedContinuation<Result, any Error>) {
        let ready: Swift.Result<Result, any Error>? = lock.withLock {
            if let early { return early }
            self.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    func onFinish(_ body: @escaping @Sendable () -> Void) {
        let now = lock.withLock {
            if finished { return true }
            finishers.append(body)
            return false
        }
        if now { body() }
    }

    func finish(_ result: Swift.Result<Result, any Error>) {
        let (waiting, bodies): (CheckedContinuation<Result, any Error>?, [@Sendable () -> Void]) = lock.withLock {
            guard !finished else { return (nil, []) }
            finished = true
            defer {
                continuation = nil
                finishers = []
            }
            if continuation == nil { early = result }
            return (continuation, finishers)
        }
        waiting?.resume(with: result)
        for body in bodies { body() }
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
