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
        // Objects met again while they are being decoded come back as cycles (a sub-entity's NSSuperentity, an
        // inverse relationship): name them by UID, and fall back on the parents' NSSubentities lists.
        let objects = Self.entries(fields.value("NSEntities")).compactMap { entry -> ArchivedObject? in
            guard case .object(let object) = entry.value else { return nil }
            return object
        }
        var names = Names()
        for object in objects {
            guard case .fields(let entityFields) = object.content, let name = entityFields.value("NSEntityName")?.stringValue else { continue }
            names.byUID[object.uid] = name
            for sub in Self.entries(entityFields.value("NSSubentities")) {
                if let subName = sub.key.stringValue { names.parents[subName] = name }
            }
            for property in Self.entries(entityFields.value("NSProperties")) {
                if case .object(let propertyObject) = property.value, let propertyName = property.key.stringValue {
                    names.byUID[propertyObject.uid] = propertyName
                }
            }
        }
        var entities: [EntityDescription] = []
        for object in objects {
            entities.append(try entity(object, names: names, file: file))
        }
        let identifiers = fields.value("NSVersionIdentifiers")?.elements?.compactMap(\.stringValue) ?? []
        return ManagedObjectModel(entities: declaredOnly(entities), versionIdentifiers: identifiers)
    }

    /// Removes inherited properties: a compiled sub-entity lists its parent's properties too, a source model does not.
    private static func declaredOnly(_ entities: [EntityDescription]) -> [EntityDescription] {
        let all = ManagedObjectModel(entities: entities)
        return entities.map { entity in
            guard let parent = entity.parentName.flatMap(all.entity(named:)) else { return entity }
            let inheritedAttributes = Set(all.allAttributes(of: parent).map(\.name))
            let inheritedRelationships = Set(all.allRelationships(of: parent).map(\.name))
            var declared = entity
            declared.attributes.removeAll { inheritedAttributes.contains($0.name) }
            declared.relationships.removeAll { inheritedRelationships.contains($0.name) }
            return declared
        }
    }

    /// Names of the model's entities and properties by archive UID, and each sub-entity's parent.
    struct Names {
        var byUID: [Int: String] = [:]
        var parents: [String: String] = [:]

        /// The `NSEntityName` or `NSPropertyName` of an object, or of the object a cycle refers to.
        func name(of value: ArchivedValue?, key: String) -> String? {
            switch value {
            case .object(let object)?:
                guard case .fields(let fields) = object.content else { return byUID[object.uid] }
                return fields.value(key)?.stringValue ?? byUID[object.uid]
            case .cycle(let uid)?: return byUID[uid]
            default: return nil
            }
        }
    }

    private static func entity(_ object: ArchivedObject, names: Names, file: String) throws(CoreDataError) -> EntityDescription {
        guard case .fields(let fields) = object.content, let name = fields.value("NSEntityName")?.stringValue else {
            throw CoreDataError(.invalidModel, "\(file): an NSEntityDescription has no NSEntityName")
        }
        var entity = EntityDescription(
            name: name, renamingIdentifier: fields.value("NSRenamingIdentifier")?.stringValue,
            className: fields.value("NSClassNameForEntity")?.stringValue,
            parentName: names.name(of: fields.value("NSSuperentity"), key: "NSEntityName") ?? names.parents[name],
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
                        name: propertyName,
                        destination: propertyFields.value("_NSDestinationEntityName")?.stringValue
                            ?? names.name(of: propertyFields.value("NSDestinationEntity"), key: "NSEntityName") ?? "",
                        inverse: propertyFields.value("_NSInverseRelationshipName")?.stringValue
                            ?? names.name(of: propertyFields.value("NSInverseRelationship"), key: "NSPropertyName"),
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
