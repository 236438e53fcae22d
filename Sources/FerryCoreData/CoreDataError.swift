import FerryCore

/// An error opening or reading a Core Data store or its model.
public struct CoreDataError: FerryError {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notSQLite = "not-sqlite"
            case notCoreData = "not-core-data"
            case corrupt = "corrupt"
            case modelNotFound = "model-not-found"
            case invalidModel = "invalid-model"
            case unknownEntity = "unknown-entity"
            case changedWhileRead = "changed-while-read"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file is not an SQLite database.
        public static let notSQLite = Code(.notSQLite)
        /// An SQLite database, but not a Core Data store (no Z_PRIMARYKEY / Z_METADATA).
        public static let notCoreData = Code(.notCoreData)
        /// SQLite reports damage, or the store's bookkeeping contradicts itself.
        public static let corrupt = Code(.corrupt)
        /// No model could be found or inferred.
        public static let modelNotFound = Code(.modelNotFound)
        /// A model file is malformed.
        public static let invalidModel = Code(.invalidModel)
        /// An entity named on the command line is not in the model.
        public static let unknownEntity = Code(.unknownEntity)
        /// Another process wrote the store while it was being read (or copied to be read).
        public static let changedWhileRead = Code(.changedWhileRead)

        public var description: String { "coredata.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .unknownEntity: .usage
            case .modelNotFound: .noInput
            case .changedWhileRead: .temporary
            default: .dataError
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
