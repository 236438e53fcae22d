import Foundation

/// A typed field value, one of CloudKit's value types or a list of one.
///
/// References, assets and locations are stored out of line, which keeps every value small (copies are cheap).
public enum FieldValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// A 64-bit integer; CloudKit has no boolean, booleans are 0 and 1.
    case int64(Int64)
    /// A double-precision number; must be finite.
    case double(Double)
    /// A point in time, in milliseconds since 1970-01-01T00:00:00Z.
    case timestamp(Int64)
    /// Raw bytes, stored in the record (they count toward its size limit).
    case bytes(Data)
    /// A reference to another record in the same zone.
    indirect case reference(Reference)
    /// A file stored beside the record, addressed by its content.
    indirect case asset(Asset)
    /// A geographic location.
    indirect case location(Location)
    /// A list of values of one scalar type.
    case list(FieldList)

    /// The value's type.
    public var type: FieldType {
        switch self {
        case .string: .scalar(.string)
        case .int64: .scalar(.int64)
        case .double: .scalar(.double)
        case .timestamp: .scalar(.timestamp)
        case .bytes: .scalar(.bytes)
        case .reference: .scalar(.reference)
        case .asset: .scalar(.asset)
        case .location: .scalar(.location)
        case .list(let list): .list(list.elementType)
        }
    }

    /// The scalar type, or `nil` for a list.
    public var scalarType: ScalarType? {
        if case .scalar(let type) = type { return type }
        return nil
    }

    /// A date as a timestamp value, truncated to whole milliseconds.
    public static func timestamp(_ date: Date) -> FieldValue {
        .timestamp(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

/// A homogeneous list of scalar field values.
public struct FieldList: Sendable, Hashable {
    /// The elements' type; `nil` only for an empty list whose type is unknown.
    public let elementType: ScalarType?
    /// The elements, all scalars of ``elementType``.
    public let elements: [FieldValue]

    /// Creates a list, checking that every element is a scalar of `elementType`.
    /// - Returns: `nil` if an element is a list or has another type.
    public init?(_ elementType: ScalarType, _ elements: [FieldValue]) {
        guard elements.allSatisfy({ $0.scalarType == elementType }) else { return nil }
        self.elementType = elementType
        self.elements = elements
    }

    /// An empty list of unknown element type (CloudKit's `UNKNOWN_LIST`).
    public static let emptyUnknown = FieldList(unchecked: nil, [])

    init(unchecked elementType: ScalarType?, _ elements: [FieldValue]) {
        self.elementType = elementType
        self.elements = elements
    }
}
