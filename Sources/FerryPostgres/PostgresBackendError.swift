import FerryCore
import PostgresNIO

/// An error connecting to PostgreSQL or using Ferry's schema there.
public struct PostgresBackendError: FerryError {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidURL = "invalid-url"
            case unavailable
            case authentication
            case permission
            case newerSchema = "newer-schema"
            case olderSchema = "older-schema"
            case server
            case interrupted
            case connectionLost = "connection-lost"
            case busy
            case noData = "no-data"
            case readOnly = "read-only"
            case resources
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The connection URL or settings cannot be read (a wrong scheme, an unknown parameter, a bad port).
        public static let invalidURL = Code(.invalidURL)
        /// The server cannot be reached or refuses connections.
        public static let unavailable = Code(.unavailable)
        /// The server refused the credentials.
        public static let authentication = Code(.authentication)
        /// The role lacks a privilege Ferry needs (on the schema, the database).
        public static let permission = Code(.permission)
        /// The schema was made by a newer Ferry.
        public static let newerSchema = Code(.newerSchema)
        /// The schema has an earlier layout, which this Ferry reads but does not write until it is migrated.
        public static let olderSchema = Code(.olderSchema)
        /// The server refused a statement for another reason.
        public static let server = Code(.server)
        /// The connection dropped during a copy and retries ran out.
        public static let interrupted = Code(.interrupted)
        /// The connection was lost during an operation (retried; what is left after the retries is `interrupted`).
        public static let connectionLost = Code(.connectionLost)
        /// Another copy is writing the zone, and the copy was asked not to wait (`--no-wait`).
        public static let busy = Code(.busy)
        /// The schema holds no Ferry data (read before anything was copied into it).
        public static let noData = Code(.noData)
        /// The server takes no writes (a standby, or `default_transaction_read_only`).
        public static let readOnly = Code(.readOnly)
        /// The server ran out of something for now: connections, disk, memory.
        public static let resources = Code(.resources)

        public var description: String { "postgres.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .invalidURL: .usage
            case .unavailable: .unavailable
            case .authentication, .permission: .permission
            case .newerSchema, .olderSchema, .readOnly: .config
            case .server: .dataError
            case .interrupted, .connectionLost, .busy, .resources: .temporary
            case .noData: .noInput
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, where, and how to fix it (never a password).
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var kind: FailureKind { code.kind }

    /// The SQLSTATE the server answered with, when it refused a statement.
    var sqlState: String? { (cause as? PSQLError)?.serverInfo?[.sqlState] }

    /// The server's message, when it refused something ("" otherwise).
    var serverMessage: String { (cause as? PSQLError)?.serverInfo?[.message] ?? "" }

    /// Whether the server refused the data of a statement (a value, a constraint, a size), not the statement itself
    /// or the connection: a record's problem, which that record alone should fail for.
    var refusesData: Bool { (cause as? PSQLError).map(Self.refusesData) ?? false }

    /// Whether a server error is about the data: data exceptions (class 22), integrity constraints (23, but for a
    /// unique violation, which Ferry's own writes check before), program limits (54: a value too large to index).
    static func refusesData(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState], state != "23505" else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("54")
    }

    /// The server's message with its detail and SQLSTATE, for a record's refusal.
    static func serverMessage(_ error: PSQLError) -> String {
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        // "Failing row contains (…)" repeats the record, which the reject file holds whole.
        let detail = error.serverInfo?[.detail].flatMap { $0.hasPrefix("Failing row contains") ? nil : " (\($0))" } ?? ""
        return "\(message)\(detail), SQLSTATE \(error.serverInfo?[.sqlState] ?? "unknown")"
    }
    public var codeName: String { code.description }
}

/// postgres-nio's errors describe themselves with a placeholder: as causes they are said as what the server said, the
/// error's code, or the column that did not decode (``PostgresDatabase/describe(_:)``).
extension PSQLError: ExplainedError {
    public var explanation: String { PostgresDatabase.describe(self) }
}

extension PostgresDecodingError: ExplainedError {
    public var explanation: String { PostgresDatabase.describe(self) }
}
