import Foundation

/// An entity of a model that ``CoreDataStoreBuilder`` writes (as an `.xcdatamodeld` and as store tables).
public struct EntitySpec: Sendable {
    public var name: String
    public var parent: String?
    public var isAbstract: Bool
    /// The Xcode `elementID` (renaming identifier): the entity's former name.
    public var renamingIdentifier: String?
    public var attributes: [AttributeSpec]
    public var relationships: [RelationshipSpec]

    public init(
        _ name: String, parent: String? = nil, isAbstract: Bool = false, renamingIdentifier: String? = nil, attributes: [AttributeSpec] = [],
        relationships: [RelationshipSpec] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.renamingIdentifier = renamingIdentifier
        self.attributes = attributes
        self.relationships = relationships
    }
}

/// An attribute: its name and its Xcode `attributeType` string (`"Integer 16"`, `"Date"`, `"Binary"`, …).
public struct AttributeSpec: Sendable {
    public var name: String
    public var type: String
    public var allowsExternalStorage: Bool
    public var transformer: String?
    /// A derivation expression (a derived attribute, maintained by Core Data's triggers).
    public var derivation: String?

    public init(_ name: String, _ type: String, allowsExternalStorage: Bool = false, transformer: String? = nil, derivation: String? = nil) {
        self.name = name
        self.type = type
        self.allowsExternalStorage = allowsExternalStorage
        self.transformer = transformer
        self.derivation = derivation
    }
}

/// A relationship.
public struct RelationshipSpec: Sendable {
    public var name: String
    public var destination: String
    public var inverse: String?
    public var isToMany: Bool
    public var isOrdered: Bool
    public var deleteRule: String

    public init(_ name: String, to destination: String, inverse: String?, toMany: Bool = false, ordered: Bool = false, deleteRule: String = "Nullify")
    {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = toMany
        self.isOrdered = ordered
        self.deleteRule = deleteRule
    }
}

/// A value to store, by its SQLite storage; the builder applies Core Data's encodings (formats.md §1.5).
public enum StoreValue: Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case bool(Bool)
    /// Seconds since 2001-01-01, stored as REAL.
    case date(Double)
    /// 16 raw bytes.
    case uuid(UUID)
    /// Binary data with "Allows External Storage" kept in the database: `0x01` + bytes.
    case inlineMarked([UInt8])
    /// Binary data with "Allows External Storage" kept in `_EXTERNAL_DATA/<uuid>`: `0x02` + UUID + NUL in the column.
    /// `writeFile: false` leaves the file out (a missing external file).
    case external([UInt8], uuid: UUID, writeFile: Bool = true)
}

/// An object inserted into a ``CoreDataStoreBuilder``.
public struct StoreObject: Sendable, Hashable {
    public var entity: String
    public var primaryKey: Int64

    /// An object reference; one made up (not inserted) stands for a dangling reference.
    public init(entity: String, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }
}
