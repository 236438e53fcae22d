import FerryCore
import FerryPlist

/// Reads a compiled model — a `.mom` file or a store's `Z_MODELCACHE` — from its NSKeyedArchiver graph.
enum CompiledModelReader {
    /// Parses a compiled model.
    /// - Parameter file: what to name in errors.
    static func read(_ bytes: [UInt8], file: String) throws(CoreDataError) -> ManagedObjectModel {
        let root: ArchivedValue
        do {
            guard let top = try PlistDocument(bytes: bytes).decodeArchive() else {
                throw CoreDataError(.invalidModel, "\(file): not a compiled model (not a keyed archive)")
            }
            root = top.first { $0.key == "root" }?.value ?? .null
        } catch let error as PlistError {
            throw CoreDataError(.invalidModel, "\(file): \(error.message)", cause: error)
        } catch let error as CoreDataError {
            throw error
        } catch {
            throw CoreDataError(.invalidModel, "\(file): \(error)")
        }
        guard case .object(let model) = root, model.archivedClass.chain.contains("NSManagedObjectModel"), case .fields(let fields) = model.content
        else {
            throw CoreDataError(.invalidModel, "\(file): the archive's root is not an NSManagedObjectModel")
        }
        var entities: [EntityDescription] = []
        for entry in Self.entries(fields.value("NSEntities")) {
            guard case .object(let object) = entry.value else { continue }
            entities.append(try entity(object, file: file))
        }
        let identifiers = fields.value("NSVersionIdentifiers")?.elements?.compactMap(\.stringValue) ?? []
        return ManagedObjectModel(entities: entities, versionIdentifiers: identifiers)
    }

    private static func entity(_ object: ArchivedObject, file: String) throws(CoreDataError) -> EntityDescription {
        guard case .fields(let fields) = object.content, let name = fields.value("NSEntityName")?.stringValue else {
            throw CoreDataError(.invalidModel, "\(file): an NSEntityDescription has no NSEntityName")
        }
        var entity = EntityDescription(
            name: name, renamingIdentifier: fields.value("NSRenamingIdentifier")?.stringValue,
            className: fields.value("NSClassNameForEntity")?.stringValue, parentName: superentityName(fields.value("NSSuperentity")),
            isAbstract: fields.value("NSIsAbstract")?.boolValue ?? false)
        if entity.renamingIdentifier == name { entity.renamingIdentifier = nil }
        for entry in entries(fields.value("NSProperties")) {
            guard case .object(let property) = entry.value, case .fields(let propertyFields) = property.content,
                let propertyName = propertyFields.value("NSPropertyName")?.stringValue ?? entry.key.stringValue
            else { continue }
            var renaming = propertyFields.value("NSRenamingIdentifier")?.stringValue
            if renaming == propertyName { renaming = nil }
            let chain = property.archivedClass.chain
            if chain.contains("NSRelationshipDescription") {
                let maxCount = Int(propertyFields.value("NSMaxCount")?.integerValue ?? 1)
                entity.relationships.append(
                    RelationshipDescription(
                        name: propertyName, destination: destinationName(propertyFields) ?? "",
                        inverse: propertyFields.value("_NSInverseRelationshipName")?.stringValue
                            ?? relationshipName(propertyFields.value("NSInverseRelationship")),
                        isToMany: maxCount != 1, isOrdered: propertyFields.value("NSIsOrdered")?.boolValue ?? false,
                        deleteRule: DeleteRule(number: propertyFields.value("NSDeleteRule")?.integerValue ?? 1),
                        minCount: Int(propertyFields.value("NSMinCount")?.integerValue ?? 0), maxCount: maxCount,
                        isOptional: propertyFields.value("NSIsOptional")?.boolValue ?? false, renamingIdentifier: renaming))
            } else if chain.contains("NSAttributeDescription") {
                let number = propertyFields.value("NSAttributeType")?.integerValue ?? 0
                entity.attributes.append(
                    AttributeDescription(
                        name: propertyName, type: AttributeType(rawValue: Int(number)) ?? .undefined,
                        isOptional: propertyFields.value("NSIsOptional")?.boolValue ?? false,
                        isTransient: propertyFields.value("NSIsTransient")?.boolValue ?? false, allowsExternalStorage: nil,
                        valueTransformerName: propertyFields.value("NSValueTransformerName")?.stringValue, renamingIdentifier: renaming,
                        isDerived: chain.contains("NSDerivedAttributeDescription")))
            }
        }
        return entity
    }

    private static func superentityName(_ value: ArchivedValue?) -> String? {
        guard case .object(let object)? = value, case .fields(let fields) = object.content else { return nil }
        return fields.value("NSEntityName")?.stringValue
    }

    private static func destinationName(_ fields: [ArchivedField]) -> String? {
        fields.value("_NSDestinationEntityName")?.stringValue ?? superentityName(fields.value("NSDestinationEntity"))
    }

    private static func relationshipName(_ value: ArchivedValue?) -> String? {
        guard case .object(let object)? = value, case .fields(let fields) = object.content else { return nil }
        return fields.value("NSPropertyName")?.stringValue
    }

    /// The entries of an archived dictionary (NSDictionary, NSKnownKeysDictionary1), in key order.
    private static func entries(_ value: ArchivedValue?) -> [ArchivedEntry] {
        guard case .object(let object)? = value, case .dictionary(let entries) = object.content else { return [] }
        return entries.sorted { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }
    }
}

extension [ArchivedField] {
    /// The value of a named field.
    func value(_ name: String) -> ArchivedValue? { first { $0.name == name }?.value }
}

extension ArchivedValue {
    /// An integer, inline or as an NSNumber object.
    var integerValue: Int64? {
        switch self {
        case .integer(let number): number
        case .bool(let flag): flag ? 1 : 0
        case .object(let object): if case .number(let number) = object.content { number.integerValue } else { nil }
        default: nil
        }
    }

    /// A Boolean, inline or as an NSNumber.
    var boolValue: Bool? { integerValue.map { $0 != 0 } }
}
