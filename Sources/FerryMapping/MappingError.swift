import FerryCore

/// An error planning or applying a mapping from a source's objects to records.
public struct MappingError: FerryError {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidPlan = "invalid-plan"
            case unknownPreset = "unknown-preset"
            case unknownEntity = "unknown-entity"
            case unknownProperty = "unknown-property"
            case zoneCycle = "zone-cycle"
            case unknownField = "unknown-field"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The mapping file is not valid YAML or does not have the plan's shape.
        public static let invalidPlan = Code(.invalidPlan)
        /// `--preset` names no preset.
        public static let unknownPreset = Code(.unknownPreset)
        /// The plan names an entity the source does not have.
        public static let unknownEntity = Code(.unknownEntity)
        /// The plan names an attribute or relationship the entity does not have.
        public static let unknownProperty = Code(.unknownProperty)
        /// An option names a field or property (`--status-field`) that no object of the source has.
        public static let unknownField = Code(.unknownField)
        /// Entities take their zone from each other in a circle.
        public static let zoneCycle = Code(.zoneCycle)

        public var description: String { "mapping.\(base.rawValue)" }

        var kind: FailureKind {
            switch base {
            case .unknownPreset, .unknownField: .usage
            default: .config
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
