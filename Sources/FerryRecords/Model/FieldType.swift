/// The type of a single (non-list) field value.
public enum ScalarType: String, Sendable, Hashable, CaseIterable, Comparable {
    case string = "STRING"
    case int64 = "INT64"
    case double = "DOUBLE"
    case timestamp = "TIMESTAMP"
    case bytes = "BYTES"
    case reference = "REFERENCE"
    case asset = "ASSET"
    case location = "LOCATION"

    /// The CloudKit type tag, such as `STRING`.
    public var tag: String { rawValue }

    public static func < (lhs: ScalarType, rhs: ScalarType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The type of a field: a scalar type or a list of one, as CloudKit's type tags name them.
public enum FieldType: Sendable, Hashable, CustomStringConvertible {
    /// A single value.
    case scalar(ScalarType)
    /// A list of values of one type; `nil` for an empty list whose element type is unknown (`UNKNOWN_LIST`).
    case list(ScalarType?)

    /// The CloudKit type tag, such as `STRING`, `STRING_LIST` or `UNKNOWN_LIST`.
    public var tag: String {
        switch self {
        case .scalar(let type): type.tag
        case .list(let type?): "\(type.tag)_LIST"
        case .list(nil): "UNKNOWN_LIST"
        }
    }

    public var description: String { tag }

    /// Parses a type tag as Ferry writes it (`STRING`, `STRING_LIST`, `UNKNOWN_LIST`).
    public init?(tag: String) {
        if let scalar = ScalarType(rawValue: tag) {
            self = .scalar(scalar)
        } else if tag == "UNKNOWN_LIST" {
            self = .list(nil)
        } else if tag.hasSuffix("_LIST"), let scalar = ScalarType(rawValue: String(tag.dropLast(5))) {
            self = .list(scalar)
        } else {
            return nil
        }
    }

    /// Whether a value of type `other` may be stored in a field of this type (an empty list fits any list).
    public func accepts(_ other: FieldType) -> Bool {
        switch (self, other) {
        case (.list, .list(nil)), (.list(nil), .list): true
        default: self == other
        }
    }
}
