import FerryPlist
import Foundation

/// One object of a store, with its attribute values (by model type) and its relationships as references.
public struct ManagedObject: Sendable {
    /// The concrete entity.
    public var entity: String
    /// `Z_PK`.
    public var primaryKey: Int64
    /// The store's UUID (`Z_UUID`), the host part of object-ID URIs.
    public var storeUUID: String
    /// The object-ID URI, `x-coredata://<store UUID>/<Entity>/p<pk>`.
    public var uri: String { "x-coredata://\(storeUUID)/\(entity)/p\(primaryKey)" }
    /// Attribute values in model order (inherited first).
    public var attributes: [ObjectAttribute]
    /// Relationships in model order.
    public var relationships: [ObjectRelationship]
    /// What is wrong with this object's stored data (a missing external file, a value of the wrong type, a key
    /// that is not a number): reported for the object, never fatal.
    public var problems: [String] = []

    /// The value of an attribute (a copy: see ``withAttribute(_:_:)`` to read it in place).
    public func attribute(_ name: String) -> ObjectValue? { withAttribute(name) { copy $0 } }

    /// What `body` makes of an attribute's value, read where it lies; `nil` when the object has no such attribute.
    @inlinable
    public func withAttribute<Result>(_ name: String, _ body: (borrowing ObjectValue) throws -> Result?) rethrows -> Result? {
        try attributes.withUnsafeBufferPointer { attributes in
            guard let index = attributes.firstIndex(where: { $0.name == name }) else { return nil }
            return try body(attributes[index].value)
        }
    }

    /// The value of a relationship.
    public func relationship(_ name: String) -> RelationshipValue? { relationships.first { $0.name == name }?.value }
}

/// One attribute of an object: its name and value.
///
/// A struct rather than a tuple (and not generic): a reader refills one object's arrays for every row, and the
/// elements it empties out are destroyed through their type's witnesses, which the runtime's generic code for tuples
/// makes several times slower.
public struct ObjectAttribute: Sendable, Hashable {
    /// The attribute's name in the model.
    public var name: String
    /// Its value.
    public var value: ObjectValue

    /// A named value.
    public init(_ name: String, _ value: ObjectValue) {
        self.name = name
        self.value = value
    }
}

/// One relationship of an object: its name and targets (a struct, as ``ObjectAttribute`` is).
public struct ObjectRelationship: Sendable, Hashable {
    /// The relationship's name in the model.
    public var name: String
    /// Its value.
    public var value: RelationshipValue

    /// A named value.
    public init(_ name: String, _ value: RelationshipValue) {
        self.name = name
        self.value = value
    }
}

/// A reference to another object.
public struct ObjectReference: Sendable, Hashable {
    /// The target's concrete entity.
    public var entity: String
    /// The target's `Z_PK`.
    public var primaryKey: Int64
    /// The store's UUID.
    public var storeUUID: String
    /// The target's object-ID URI.
    public var uri: String { "x-coredata://\(storeUUID)/\(entity)/p\(primaryKey)" }
}

/// A relationship's value.
public enum RelationshipValue: Sendable, Hashable {
    case toOne(ObjectReference?)
    /// In order for ordered relationships, by primary key otherwise.
    case toMany([ObjectReference])
}

/// An attribute value, decoded by its model type.
public enum ObjectValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case boolean(Bool)
    case double(Double)
    /// A Decimal, as its stored decimal text (Core Data stores decimals as REAL: precision may already be lost).
    case decimal(String)
    case string(String)
    /// Seconds since 2001-01-01T00:00:00Z.
    case date(Double)
    case data([UInt8])
    /// Binary data stored outside the database (`.<Store>_SUPPORT/_EXTERNAL_DATA/<uuid>`).
    case externalData(ExternalData)
    case uuid(UUID)
    case uri(String)
    /// A Transformable attribute holding a keyed archive, decoded, with the bytes as stored.
    case archived(ArchivedValue, bytes: [UInt8])
    /// A Transformable attribute holding a plain property list, with the bytes as stored.
    case plist(PlistValue, bytes: [UInt8])
    /// A Transformable attribute with a custom encoding: the bytes as stored.
    case opaque([UInt8])
    /// A value whose storage does not match the model type (kept as SQLite gave it; reported as a problem).
    case unexpected(SQLiteValue)
    /// A value of a type Ferry does not interpret (Undefined, ObjectID, Composite, a type the model names that Ferry
    /// does not know): kept as SQLite stores it.
    case raw(SQLiteValue)
}

/// Binary data kept in a file beside the store.
public struct ExternalData: Sendable, Hashable {
    /// The file's name (a UUID).
    public var uuid: String
    /// The file's path, when the support directory exists.
    public var path: String?
    /// The file's size; `nil` when the file is missing (reported for the object, not fatal).
    public var size: Int64?
}

/// A raw SQLite value.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLiteValue {
    /// SQLite's name for the storage class.
    public var typeName: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }
}
