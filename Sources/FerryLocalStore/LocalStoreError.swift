import FerryCore

/// An error opening, reading or writing an embedded local sync store.
public struct LocalStoreError: FerryError {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notAStore = "not-a-store"
            case unsupportedVersion = "unsupported-version"
            case missing
            case busy
            case invalidToken = "invalid-token"
            case damaged
            case cannotCreate = "cannot-create"
            case changedWhileRead = "changed-while-read"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file is not a Ferry local store (another SQLite database, or not SQLite).
        public static let notAStore = Code(.notAStore)
        /// The store was written by a newer Ferry.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The store does not exist and was not to be created.
        public static let missing = Code(.missing)
        /// Another process holds the store's write lock.
        public static let busy = Code(.busy)
        /// A sync token that this store did not issue for this zone.
        public static let invalidToken = Code(.invalidToken)
        /// The store's contents are damaged (a row that does not decode, a missing asset chunk).
        public static let damaged = Code(.damaged)
        /// The store could not be created or written (permissions, disk full).
        public static let cannotCreate = Code(.cannotCreate)
        /// Another process wrote the store while this one read it as a source.
        public static let changedWhileRead = Code(.changedWhileRead)

        public var description: String { "local.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .notAStore, .unsupportedVersion, .damaged: .dataError
            case .missing: .noInput
            case .busy, .changedWhileRead: .temporary
            case .invalidToken: .usage
            case .cannotCreate: .cannotCreate
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong, where, and how to fix it.
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
    public var codeName: String { code.description }
}
