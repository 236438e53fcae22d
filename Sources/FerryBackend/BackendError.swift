import FerryCore

/// An error a backend gives for a whole request (not one record's outcome): unreachable, refused, throttled, a bad
/// token, damaged data.
public struct BackendError: FerryError {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unavailable
            case authentication
            case permission
            case throttled
            case invalidToken = "invalid-token"
            case zoneNotFound = "zone-not-found"
            case assetNotFound = "asset-not-found"
            case damaged
            case invalidRequest = "invalid-request"
            case invalidPolicy = "invalid-policy"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The backend cannot be reached (no server, connection refused or dropped).
        public static let unavailable = Code(.unavailable)
        /// The backend refused the credentials.
        public static let authentication = Code(.authentication)
        /// The credentials lack a permission the request needs.
        public static let permission = Code(.permission)
        /// The backend asked to slow down, and the retries ran out.
        public static let throttled = Code(.throttled)
        /// A sync token the backend did not issue for this zone.
        public static let invalidToken = Code(.invalidToken)
        /// A request named a zone the backend does not have.
        public static let zoneNotFound = Code(.zoneNotFound)
        /// An asset the backend does not hold was asked for.
        public static let assetNotFound = Code(.assetNotFound)
        /// The backend's data, or bytes sent to it, are damaged (an asset whose bytes do not hash to its digest).
        public static let damaged = Code(.damaged)
        /// A request the backend cannot take (more operations than it allows, operations outside the request's zone).
        public static let invalidRequest = Code(.invalidRequest)
        /// A conflict policy that names none.
        public static let invalidPolicy = Code(.invalidPolicy)

        public var description: String { "backend.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .unavailable: .unavailable
            case .authentication, .permission: .permission
            case .throttled: .temporary
            case .invalidToken, .invalidPolicy: .usage
            case .zoneNotFound, .assetNotFound: .noInput
            case .damaged: .dataError
            case .invalidRequest: .software
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, where, and how to fix it.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?
    /// How long the backend asked to wait before trying again, when it said.
    public var retryAfter: Duration?

    /// Creates an error.
    public init(_ code: Code, _ message: String, retryAfter: Duration? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.cause = cause
    }

    public var kind: FailureKind { code.kind }
    public var codeName: String { code.description }
}
