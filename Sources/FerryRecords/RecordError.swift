import FerryCore

/// An error about one record: it could not be decoded from JSON, or one of its assets could not be read.
public struct RecordError: FerryError {
    /// What kind of record failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidJSON = "invalid-json"
            case invalidRecord = "invalid-record"
            case unsupported = "unsupported"
            case assetUnavailable = "asset-unavailable"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The text is not JSON.
        public static let invalidJSON = Code(.invalidJSON)
        /// The JSON is not a record in CloudKit's form.
        public static let invalidRecord = Code(.invalidRecord)
        /// The record uses a CloudKit feature Ferry does not carry (sharing, encrypted fields).
        public static let unsupported = Code(.unsupported)
        /// An asset file named by the record cannot be read.
        public static let assetUnavailable = Code(.assetUnavailable)

        public var description: String { "record.\(base.rawValue)" }
    }

    /// The kind of failure.
    public var code: Code
    /// Where in the record JSON the problem is, such as `fields.photo.value`; empty for the whole record.
    public var path: String
    /// What is wrong and how to fix it.
    public var reason: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, at path: String, _ reason: String, cause: (any Error)? = nil) {
        self.code = code
        self.path = path
        self.reason = reason
        self.cause = cause
    }

    public var kind: FailureKind { .dataError }

    /// The record rule this error breaks, for reject reports.
    public var rule: RecordRule {
        switch code {
        case .unsupported: .unsupported
        case .assetUnavailable: .asset
        default: .malformed
        }
    }

    /// The error as a record problem.
    public var problem: RecordProblem { RecordProblem(.error, rule, at: path, reason) }
    public var codeName: String { code.description }
    public var message: String { path.isEmpty ? reason : "\(path): \(reason)" }
}
