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
            case server
            case interrupted
            case noData = "no-data"
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
        /// The server refused a statement for another reason.
        public static let server = Code(.server)
        /// The connection dropped during a copy and retries ran out.
        public static let interrupted = Code(.interrupted)
        /// The schema holds no Ferry data (read before anything was copied into it).
        public static let noData = Code(.noData)

        public var description: String { "postgres.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .invalidURL: .usage
            case .unavailable: .unavailable
            case .authentication, .permission: .permission
            case .newerSchema: .config
            case .server: .dataError
            case .interrupted: .temporary
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
    public var codeName: String { code.description }
}
