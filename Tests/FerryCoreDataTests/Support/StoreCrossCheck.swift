import FerryCore
import FerryCoreData
import FerryJSON
import FerryTesting
import Foundation
import Testing

/// Reads a whole store with Ferry and checks it against the `sqlite3` shell: counts per entity, every attribute value,
/// references, hierarchy and URIs, and that no source file changed.
struct StoreCrossCheck {
    /// What the check read.
    struct Summary {
        var store: CoreDataStore
        /// Objects read per concrete entity (model names).
        var objects: [String: Int]
        /// To-one references whose target row does not exist, by `Entity.relationship`.
        var unresolvedToOne: [String: Int]
        /// Every object, when kept.
        var all: [ManagedObject]
    }

    /// Runs the check.
    /// - Parameters:
    ///   - store: the store, opened in place by Ferry (read-only by design; this check proves it).
    ///   - model: the model choice.
    ///   - keepObjects: whether to return every object.
    static func run(
        store: String, model: ModelChoice, keepObjects: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Summary {
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent().path
        let before = try DirectoryFingerprint(folder)
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(store, into: scratch)

        let opened = try CoreDataStore(path: store, model: model)
        var objects: [String: Int] = [:]
        var all: [ManagedObject] = []
        var byTable: [String: [ManagedObject]] = [:]
        try opened.forEachObject { object in
            objects[object.entity, default: 0] += 1
            if let entity = opened.schema.entity(named: object.entity) { byTable[entity.table, default: []].append(object) }
            if keepObjects { all.append(object) }
        }

        // Bookkeeping, read by the shell.
        let primaryKeys = try SQLiteShell.rows(copy, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY")
        let superNumber = Dictionary(
            uniqueKeysWithValues: primaryKeys.compactMap { row in row["Z_ENT"]?.int64Value.map { (Int($0), Int(row["Z_SUPER"]?.int64Value ?? 0)) } })
        let storeUUID = try SQLiteShell.rows(copy, "SELECT Z_UUID FROM Z_METADATA").first?["Z_UUID"]?.stringValue
        #expect(storeUUID == opened.metadata.uuid, sourceLocation: sourceLocation)

        // Counts per entity and hierarchy.
        for entity in opened.schema.entities {
            let counted =
                try SQLiteShell.rows(copy, "SELECT count(*) AS n FROM \"\(entity.table)\" WHERE Z_ENT = \(entity.number)").first?["n"]?.int64Value
                ?? -1
            #expect(objects[entity.description.name, default: 0] == Int(counted), "\(entity.description.name) count", sourceLocation: sourceLocation)
            #expect(try opened.count(of: entity) == Int(counted), sourceLocation: sourceLocation)
            let parentNumber = entity.description.parentName.flatMap { opened.schema.entity(named: $0)?.number } ?? 0
            #expect(parentNumber == superNumber[entity.number], "\(entity.description.name) parent", sourceLocation: sourceLocation)
        }

        // Every attribute value, table by table.
        var existing: Set<String> = []
        for (table, tableObjects) in byTable {
            let columns = Set(tableObjects.compactMap { opened.schema.entity(named: $0.entity) }.flatMap(\.attributes).compactMap(\.column)).sorted()
            let select = (["Z_PK"] + columns.map { RawValue.select($0, as: $0) }).joined(separator: ", ")
            var rows: [Int64: JSONObject] = [:]
            for row in try SQLiteShell.rows(copy, "SELECT \(select) FROM \"\(table)\"") {
                if let pk = row["Z_PK"]?.int64Value { rows[pk] = row }
            }
            for pk in rows.keys { existing.insert("\(table)#\(pk)") }
            var mismatches = 0
            for object in tableObjects {
                #expect(object.uri == "x-coredata://\(storeUUID ?? "")/\(object.entity)/p\(object.primaryKey)", sourceLocation: sourceLocation)
                guard let row = rows[object.primaryKey], let entity = opened.schema.entity(named: object.entity) else {
                    Issue.record("\(object.entity) p\(object.primaryKey) is not a row of \(table)", sourceLocation: sourceLocation)
                    continue
                }
                for attribute in entity.attributes {
                    guard let column = attribute.column, let decoded = object.attribute(attribute.description.name) else { continue }
                    let raw = RawValue(row: row, alias: column)
                    if !raw.matches(decoded), mismatches < 5 {
                        mismatches += 1
                        Issue.record(
                            "\(object.entity) p\(object.primaryKey) \(attribute.description.name): decoded \(decoded), SQLite has \(raw)",
                            sourceLocation: sourceLocation)
                    }
                }
            }
        }

        // References: to-one targets may be missing (reported), to-many ones come from existing rows.
        var unresolved: [String: Int] = [:]
        for (_, tableObjects) in byTable {
            for object in tableObjects {
                guard let entity = opened.schema.entity(named: object.entity) else { continue }
                for relationship in entity.relationships {
                    let allowed = Set(relationship.destinationNumbers.compactMap { opened.schema.entity(number: $0)?.description.name })
                    let targets: [ObjectReference]
                    switch object.relationship(relationship.description.name) {
                    case .toOne(let target)?: targets = target.map { [$0] } ?? []
                    case .toMany(let many)?: targets = many
                    case nil: targets = []
                    }
                    for target in targets {
                        #expect(
                            allowed.contains(target.entity), "\(target.entity) is not a \(relationship.description.destination)",
                            sourceLocation: sourceLocation)
                        guard let table = relationship.destinationTable, !existing.contains("\(table)#\(target.primaryKey)") else { continue }
                        if relationship.description.isToMany {
                            Issue.record(
                                "\(object.entity).\(relationship.description.name) lists a missing object \(target.uri)",
                                sourceLocation: sourceLocation)
                        } else {
                            unresolved[
                                "\(declaringEntity(of: relationship, in: entity, store: opened)).\(relationship.description.name)", default: 0] += 1
                        }
                    }
                }
            }
        }

        let after = try DirectoryFingerprint(folder)
        #expect(before == after, "a source file changed or appeared:\n\(before)\n---\n\(after)", sourceLocation: sourceLocation)
        return Summary(store: opened, objects: objects, unresolvedToOne: unresolved, all: all)
    }

    /// The entity that declares a relationship (inspection reports references under it).
    private static func declaringEntity(of relationship: StoreSchema.Relationship, in entity: StoreSchema.Entity, store: CoreDataStore) -> String {
        var current = entity.description
        while let parentName = current.parentName, let parent = store.model.model.entity(named: parentName),
            store.model.model.allRelationships(of: parent).contains(where: { $0.name == relationship.description.name })
        {
            current = parent
        }
        return current.name
    }
}
