import FerryCore

/// Reads the `contents` XML of an `.xcdatamodel` (Xcode 4 and later).
enum ModelXMLReader {
    /// Parses a model.
    /// - Parameter file: the path, for error messages.
    static func read(_ bytes: [UInt8], file: String) throws(CoreDataError) -> ManagedObjectModel {
        var scanner = XMLScanner(bytes)
        var entities: [EntityDescription] = []
        var current: EntityDescription?
        var sawModel = false
        var notes: [String] = []
        var versionIdentifiers: [String] = []
        do {
            while let token = try scanner.next() {
                guard case .start(let name, let attributes, _) = token else {
                    if case .end(name: "entity") = token, let entity = current {
                        entities.append(entity)
                        current = nil
                    }
                    continue
                }
                func attribute(_ key: String) -> String? { attributes.first { $0.name == key }?.value }
                switch name {
                case "model":
                    sawModel = true
                    if let identifier = attribute("userDefinedModelVersionIdentifier"), !identifier.isEmpty { versionIdentifiers = [identifier] }
                case "entity":
                    guard let entityName = attribute("name") else { throw CoreDataError(.invalidModel, "\(file): an <entity> has no name") }
                    current = EntityDescription(
                        name: entityName, renamingIdentifier: attribute("elementID"), className: attribute("representedClassName"),
                        parentName: attribute("parentEntity"), isAbstract: attribute("isAbstract") == "YES")
                case "attribute" where scanner.depth <= 3 && current != nil:
                    guard let attributeName = attribute("name") else { throw CoreDataError(.invalidModel, "\(file): an <attribute> has no name") }
                    let typeName = attribute("attributeType") ?? "Undefined"
                    let type = AttributeType(xmlName: typeName) ?? .undefined
                    if AttributeType(xmlName: typeName) == nil {
                        notes.append(
                            "\(current?.name ?? "?").\(attributeName) has a type Ferry does not know (\"\(typeName)\"); its values are kept as stored"
                        )
                    }
                    current?.attributes.append(
                        AttributeDescription(
                            name: attributeName, type: type, isOptional: attribute("optional") == "YES",
                            isTransient: attribute("transient") == "YES",
                            allowsExternalStorage: attribute("allowsExternalBinaryDataStorage") == "YES",
                            valueTransformerName: attribute("valueTransformerName"), renamingIdentifier: attribute("elementID"),
                            isDerived: attribute("derived") == "YES"))
                case "relationship" where current != nil:
                    guard let relationshipName = attribute("name"), let destination = attribute("destinationEntity") else {
                        throw CoreDataError(.invalidModel, "\(file): a <relationship> has no name or destinationEntity")
                    }
                    let toMany = attribute("toMany") == "YES"
                    current?.relationships.append(
                        RelationshipDescription(
                            name: relationshipName, destination: destination, inverse: attribute("inverseName"), isToMany: toMany,
                            isOrdered: attribute("ordered") == "YES",
                            deleteRule: DeleteRule(rawValue: attribute("deletionRule") ?? "Nullify") ?? .nullify,
                            minCount: Int(attribute("minCount") ?? "") ?? 0, maxCount: Int(attribute("maxCount") ?? "") ?? (toMany ? 0 : 1),
                            isOptional: attribute("optional") == "YES", renamingIdentifier: attribute("elementID")))
                default:
                    break
                }
            }
        } catch let error as CoreDataError {
            throw error
        } catch let error as XMLScanner.SyntaxError {
            throw CoreDataError(.invalidModel, "\(file): not well-formed XML \(error)")
        } catch {
            throw CoreDataError(.invalidModel, "\(file): \(error)")
        }
        guard sawModel else { throw CoreDataError(.invalidModel, "\(file): not a Core Data model (no <model> element)") }
        var model = ManagedObjectModel(entities: entities, versionIdentifiers: versionIdentifiers)
        model.notes = notes
        return model
    }
}
