import FerryCore

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

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
        guard let type = tag.withUTF8Bytes({ Self(tag: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = type
    }

    /// Parses a type tag from the bytes of a JSON string (without quotes), building no string.
    package init?(tag bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return nil }
        for (tag, type) in Self.tags where tag.utf8CodeUnitCount == bytes.count {
            if memcmp(base, tag.utf8Start, bytes.count) == 0 {
                self = type
                return
            }
        }
        return nil
    }

    /// Every tag Ferry writes, with its type: the one table both parsers read.
    private static let tags: [(StaticString, FieldType)] = [
        ("STRING", .scalar(.string)), ("INT64", .scalar(.int64)), ("DOUBLE", .scalar(.double)),
        ("TIMESTAMP", .scalar(.timestamp)), ("BYTES", .scalar(.bytes)), ("REFERENCE", .scalar(.reference)),
        ("ASSET", .scalar(.asset)), ("LOCATION", .scalar(.location)),
        ("STRING_LIST", .list(.string)), ("INT64_LIST", .list(.int64)), ("DOUBLE_LIST", .list(.double)),
        ("TIMESTAMP_LIST", .list(.timestamp)), ("BYTES_LIST", .list(.bytes)), ("REFERENCE_LIST", .list(.reference)),
        ("ASSET_LIST", .list(.asset)), ("LOCATION_LIST", .list(.location)), ("UNKNOWN_LIST", .list(nil)),
    ]

    /// The field dictionary's opening up to its value, `{"type":"STRING","value":`, as the canonical form writes it.
    var openingJSON: StaticString {
        switch self {
        case .scalar(.string): "{\"type\":\"STRING\",\"value\":"
        case .scalar(.int64): "{\"type\":\"INT64\",\"value\":"
        case .scalar(.double): "{\"type\":\"DOUBLE\",\"value\":"
        case .scalar(.timestamp): "{\"type\":\"TIMESTAMP\",\"value\":"
        case .scalar(.bytes): "{\"type\":\"BYTES\",\"value\":"
        case .scalar(.reference): "{\"type\":\"REFERENCE\",\"value\":"
        case .scalar(.asset): "{\"type\":\"ASSET\",\"value\":"
        case .scalar(.location): "{\"type\":\"LOCATION\",\"value\":"
        case .list(.string): "{\"type\":\"STRING_LIST\",\"value\":"
        case .list(.int64): "{\"type\":\"INT64_LIST\",\"value\":"
        case .list(.double): "{\"type\":\"DOUBLE_LIST\",\"value\":"
        case .list(.timestamp): "{\"type\":\"TIMESTAMP_LIST\",\"value\":"
        case .list(.bytes): "{\"type\":\"BYTES_LIST\",\"value\":"
        case .list(.reference): "{\"type\":\"REFERENCE_LIST\",\"value\":"
        case .list(.asset): "{\"type\":\"ASSET_LIST\",\"value\":"
        case .list(.location): "{\"type\":\"LOCATION_LIST\",\"value\":"
        case .list(nil): "{\"type\":\"UNKNOWN_LIST\",\"value\":"
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
