import FerryCore

/// Why bytes are not a property list or keyed archive Ferry can read, and where.
public struct PlistError: FerryError, Equatable {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notAPlist = "not-a-plist"
            case malformed = "malformed"
            case cycle = "cycle"
            case tooDeep = "too-deep"
            case tooLarge = "too-large"
            case notAnArchive = "not-an-archive"
            case malformedArchive = "malformed-archive"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The bytes are neither a binary, XML nor OpenStep property list.
        public static let notAPlist = Code(.notAPlist)
        /// The structure is broken: a bad trailer, an offset or reference out of range, a truncated object.
        public static let malformed = Code(.malformed)
        /// A container contains itself.
        public static let cycle = Code(.cycle)
        /// Containers nest deeper than the limit.
        public static let tooDeep = Code(.tooDeep)
        /// Shared sub-trees would expand beyond the limit (a "billion laughs" document), or a count exceeds the file.
        public static let tooLarge = Code(.tooLarge)
        /// A valid property list, but not an NSKeyedArchiver archive.
        public static let notAnArchive = Code(.notAnArchive)
        /// A keyed archive whose objects do not fit together (a bad UID, a class without a name, …).
        public static let malformedArchive = Code(.malformedArchive)

        public var description: String { "plist.\(base.rawValue)" }
    }

    /// The kind of failure.
    public var code: Code
    /// The byte offset the problem was found at, when there is one.
    public var offset: Int?
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    public init(_ code: Code, at offset: Int? = nil, _ reason: String) {
        self.code = code
        self.offset = offset
        self.reason = reason
    }

    public var kind: FailureKind { .dataError }
    public var codeName: String { code.description }
    public var message: String { offset.map { "at byte \($0): \(reason)" } ?? reason }
    public var cause: (any Error)? { nil }

    public static func == (lhs: PlistError, rhs: PlistError) -> Bool {
        lhs.code == rhs.code && lhs.offset == rhs.offset && lhs.reason == rhs.reason
    }
}
