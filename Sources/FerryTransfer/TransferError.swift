import FerryCore

/// An error choosing or running a transfer between a source and a target.
public struct TransferError: FerryError {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unknownSource = "unknown-source"
            case unknownTarget = "unknown-target"
            case unsupported
            case notYetSupported = "not-yet-supported"
            case missingAsset = "missing-asset"
            case sourceChanged = "source-changed"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The source is none of the kinds Ferry reads.
        public static let unknownSource = Code(.unknownSource)
        /// The target's name says neither a bundle nor a local store.
        public static let unknownTarget = Code(.unknownTarget)
        /// This source and target cannot be paired.
        public static let unsupported = Code(.unsupported)
        /// A backend this version of Ferry does not read or write yet (`postgres://`, `cloudkit://`).
        public static let notYetSupported = Code(.notYetSupported)
        /// A record's asset is neither in the target nor available from the source.
        public static let missingAsset = Code(.missingAsset)
        /// A source read twice gave other records the second time.
        public static let sourceChanged = Code(.sourceChanged)

        public var description: String { "transfer.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .unknownSource: .dataError
            case .unsupported, .unknownTarget, .notYetSupported: .usage
            case .missingAsset: .dataError
            case .sourceChanged: .temporary
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
