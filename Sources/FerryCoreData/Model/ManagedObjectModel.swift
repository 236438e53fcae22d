/// A Core Data model, read from any of its sources, in a neutral form.
public struct ManagedObjectModel: Sendable {
    /// The entities, sorted by name.
    public var entities: [EntityDescription]
    /// The model's version identifiers.
    public var versionIdentifiers: [String]
    /// What a user should know about the model as read (types Ferry does not know, …).
    public var notes: [String] = []

    /// Creates a model.
    public init(entities: [EntityDescription], versionIdentifiers: [String] = []) {
        self.entities = entities.sorted { $0.name < $1.name }
        self.versionIdentifiers = versionIdentifiers
    }

    /// The entity with a name.
    public func entity(named name: String) -> EntityDescription? { entities.first { $0.name == name } }

    /// The entity a store's `Z_NAME` refers to: by name, or by renaming identifier (renamed entities keep their old
    /// `Z_NAME`).
    public func entity(forStoreName name: String) -> EntityDescription? {
        entity(named: name) ?? entities.first { $0.renamingIdentifier == name }
    }

    /// The chain from an entity up to its root, the entity first.
    public func ancestry(of entity: EntityDescription) -> [EntityDescription] {
        var chain = [entity]
        var seen: Set<String> = [entity.name]
        while let parent = chain.last?.parentName, let next = self.entity(named: parent), seen.insert(parent).inserted {
            chain.append(next)
        }
        return chain
    }

    /// The entity's attributes, inherited ones first.
    public func allAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        var result: [AttributeDescription] = []
        for ancestor in ancestry(of: entity).reversed() {
            for attribute in ancestor.attributes where !result.contains(where: { $0.name == attribute.name }) { result.append(attribute) }
        }
        return result
    }

    /// The entity's relationships, inherited ones first.
    public func allRelationships(of entity: EntityDescription) -> [RelationshipDescription] {
        var result: [RelationshipDescription] = []
        for ancestor in ancestry(of: entity).reversed() {
            for relationship in ancestor.relationships where !result.contains(where: { $0.name == relationship.name }) {
                result.append(relationship)
            }
        }
        return result
    }

    /// The entities whose parent is this one.
    public func subentities(of entity: EntityDescription) -> [EntityDescription] {
        entities.filter { $0.parentName == entity.name }
    }
}

/// An entity: a kind of object, with attributes and relationships.
public struct EntityDescription: Sendable, Hashable {
    public var name: String
    /// The name this entity had before a rename, if any (`elementID` / `NSRenamingIdentifier`).
    public var renamingIdentifier: String?
    /// The app's class for it.
    public var className: String?
    /// The parent entity's name.
    public var parentName: String?
    public var isAbstract: Bool
    /// The entity's own attributes (not inherited ones).
    public var attributes: [AttributeDescription]
    /// The entity's own relationships.
    public var relationships: [RelationshipDescription]

    public init(
        name: String, renamingIdentifier: String? = nil, className: String? = nil, parentName: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = []
    ) {
        self.name = name
        self.renamingIdentifier = renamingIdentifier
        self.className = className
        self.parentName = parentName
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
    }
}

/// An attribute.
public struct AttributeDescription: Sendable, Hashable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var isTransient: Bool
    /// "Allows External Storage" for binary data (`nil` when the source does not say).
    public var allowsExternalStorage: Bool?
    public var valueTransformerName: String?
    public var renamingIdentifier: String?
    /// A derived attribute (maintained by triggers).
    public var isDerived: Bool

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false, allowsExternalStorage: Bool? = nil,
        valueTransformerName: String? = nil, renamingIdentifier: String? = nil, isDerived: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.allowsExternalStorage = allowsExternalStorage
        self.valueTransformerName = valueTransformerName
        self.renamingIdentifier = renamingIdentifier
        self.isDerived = isDerived
    }
}

/// Core Data's attribute types, by their `NSAttributeType` numbers.
public enum AttributeType: Int, Sendable, Hashable, CaseIterable {
    case undefined = 0, integer16 = 100, integer32 = 200, integer64 = 300, decimal = 400, double = 500, float = 600, string = 700
    case boolean = 800, date = 900, binaryData = 1000, uuid = 1100, uri = 1200, transformable = 1800, objectID = 2000, composite = 2100

    /// The name Xcode's model editor writes (`Integer 16`, `Binary`, …).
    public var xmlName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binaryData: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "ObjectID"
        case .composite: "Composite"
        }
    }

    /// The type an `attributeType` string names.
    public init?(xmlName: String) {
        guard let type = Self.allCases.first(where: { $0.xmlName == xmlName }) else { return nil }
        self = type
    }
}

/// A relationship.
public struct RelationshipDescription: Sendable, Hashable {
    public var name: String
    public var destination: String
    public var inverse: String?
    public var isToMany: Bool
    public var isOrdered: Bool
    public var deleteRule: DeleteRule
    public var minCount: Int
    public var maxCount: Int
    public var isOptional: Bool
    public var renamingIdentifier: String?

    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false, isOrdered: Bool = false,
        deleteRule: DeleteRule = .nullify, minCount: Int = 0, maxCount: Int = 0, isOptional: Bool = true, renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
    }
}

/// What deleting an object does to the objects it points to.
public enum DeleteRule: String, Sendable, Hashable {
    case noAction = "No Action", nullify = "Nullify", cascade = "Cascade", deny = "Deny"

    /// The rule for an `NSDeleteRule` number.
    init(number: Int64) {
        switch number {
        case 0: self = .noAction
        case 2: self = .cascade
        case 3: self = .deny
        default: self = .nullify
        }
    }
}
