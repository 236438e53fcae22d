/// An error from Ferry's shared basics: files, JSON syntax, hashing.
public struct CoreError: FerryError {
    /// What kind of core failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case fileNotFound = "file-not-found"
            case permissionDenied = "permission-denied"
            case readFailed = "read-failed"
            case writeFailed = "write-failed"
            case jsonSyntax = "json-syntax"
            case lineTooLong = "line-too-long"
            case outputReplacesInput = "output-replaces-input"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A file or directory does not exist.
        public static let fileNotFound = Code(.fileNotFound)
        /// The operating system refused access to a file.
        public static let permissionDenied = Code(.permissionDenied)
        /// Reading a file failed.
        public static let readFailed = Code(.readFailed)
        /// Writing or renaming an output file failed.
        public static let writeFailed = Code(.writeFailed)
        /// A document is not valid JSON.
        public static let jsonSyntax = Code(.jsonSyntax)
        /// A line of an NDJSON file is longer than the configured limit.
        public static let lineTooLong = Code(.lineTooLong)
        /// An output's path names one of the run's inputs, or another output: writing it would replace that file.
        public static let outputReplacesInput = Code(.outputReplacesInput)

        public var description: String { "core.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .fileNotFound: .noInput
            case .permissionDenied: .permission
            case .readFailed, .jsonSyntax, .lineTooLong: .dataError
            case .writeFailed: .cannotCreate
            case .outputReplacesInput: .usage
            }
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and how to fix it.
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
