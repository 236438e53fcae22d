import FerryCore
import Foundation
import GRDB

/// How a model maps onto a store's tables: entity numbers and tables, attribute columns, and where each relationship
/// is stored — all discovered by introspection (never fixed numbers), with what does not fit reported as warnings.
public struct StoreSchema: Sendable {
    /// One entity of the store.
    public struct Entity: Sendable {
        /// The model's entity.
        public var description: EntityDescription
        /// Its number (`Z_ENT`).
        public var number: Int
        /// Its `Z_NAME` (the name it had when the store was created).
        public var storeName: String
        /// The root entity's table.
        public var table: String
        /// Its own number and those of all its sub-entities.
        public var hierarchyNumbers: [Int]
        /// Its attributes (inherited included) and their columns.
        public var attributes: [Attribute]
        /// Its relationships (inherited included) and their storage.
        public var relationships: [Relationship]
    }

    /// An attribute and its column (`nil` when the store has none: schema drift).
    public struct Attribute: Sendable {
        public var description: AttributeDescription
        public var column: String?
    }

    /// A relationship and where it is stored.
    public struct Relationship: Sendable {
        public var description: RelationshipDescription
        public var storage: Storage
        /// The destination entity's numbers (itself and sub-entities).
        public var destinationNumbers: [Int]
        /// The destination's table.
        public var destinationTable: String?
    }

    /// Where a relationship's links live.
    public enum Storage: Sendable, Hashable {
        /// A foreign key in this entity's table, with the destination's entity number in `entityColumn` when the
        /// destination has sub-entities.
        case foreignKey(column: String, entityColumn: String?)
        /// A foreign key in the destination's table pointing back (to-many through a to-one inverse), ordered by
        /// `orderColumn` when the relationship is ordered.
        case inverseForeignKey(column: String, orderColumn: String?)
        /// A join table.
        case joinTable(table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?)
        /// Not found in the store.
        case missing(String)
    }

    /// The store's entities (its own, not Core Data's), by number.
    public var entities: [Entity] {
        didSet { reindex() }
    }
    /// Positions in ``entities`` by name and by number, for lookups on every object and reference.
    private var positionsByName: [String: Int] = [:]
    private var positionsByNumber: [Int: Int] = [:]

    private mutating func reindex() {
        positionsByName = [:]
        positionsByNumber = [:]
        for (position, entity) in entities.enumerated() {
            if positionsByName[entity.description.name] == nil { positionsByName[entity.description.name] = position }
            if positionsByNumber[entity.number] == nil { positionsByNumber[entity.number] = position }
        }
    }
    /// Core Data's own entities (persistent history, CloudKit mirroring).
    public var ancillaryEntities: [StoreMetadata.EntityRow]
    /// Tables that are not user data (`A*` history and `ANSCK*` CloudKit tables).
    public var ancillaryTables: [String]
    /// Join tables found.
    public var joinTables: [String]
    /// Columns the model does not explain, by table.
    public var unexplainedColumns: [String: [String]]
    /// What did not fit.
    public var warnings: [String]

    /// The entity with a number.
    public func entity(number: Int) -> Entity? { positionsByNumber[number].map { entities[$0] } }

    /// The entity with a (model) name.
    public func entity(named name: String) -> Entity? { positionsByName[name].map { entities[$0] } }

    /// The number of the entity with a name, without copying the entity's description.
    public func entityNumber(named name: String) -> Int? { positionsByName[name].map { entities[$0].number } }

    /// The name of the entity with a number, without copying the entity's description (once per reference read).
    public func entityName(number: Int) -> String? { positionsByNumber[number].map { entities[$0].description.name } }

    init(model: ManagedObjectModel, metadata: StoreMetadata, sqlite: SQLiteSchema, db: Database) throws {
        var warnings: [String] = []
        let rows = metadata.entityRows.filter { !$0.isAncillary }
        ancillaryEntities = metadata.entityRows.filter(\.isAncillary)
        ancillaryTables = sqlite.tables.keys.filter { $0.hasPrefix("ANSCK") || ($0.hasPrefix("A") && !$0.hasPrefix("Z")) }.sorted()
        // Entities: Z_NAME → model entity (by name or renaming identifier).
        var numbered: [(row: StoreMetadata.EntityRow, entity: EntityDescription)] = []
        for row in rows {
            guard let entity = model.entity(forStoreName: row.name) else {
                warnings.append("entity \(row.name) (Z_ENT \(row.number)) is in the store but not in the model; its rows are skipped")
                continue
            }
            numbered.append((row, entity))
        }
        for entity in model.entities where !numbered.contains(where: { $0.entity.name == entity.name }) {
            warnings.append("entity \(entity.name) is in the model but not in the store")
        }
        func number(of name: String) -> Int? { numbered.first { $0.entity.name == name }?.row.number }
        for (row, entity) in numbered {
            let modelParent = entity.parentName.flatMap(number(of:)) ?? 0
            if modelParent != row.superNumber {
                warnings.append(
                    "entity \(entity.name): the model says its parent is \(entity.parentName ?? "none"), the store's Z_PRIMARYKEY says Z_ENT \(row.superNumber)"
                )
            }
        }
        func hierarchy(of number: Int) -> [Int] {
            var result = [number]
            var index = 0
            while index < result.count {
                result += rows.filter { $0.superNumber == result[index] }.map(\.number)
                index += 1
            }
            return result
        }
        func rootRow(of row: StoreMetadata.EntityRow) -> StoreMetadata.EntityRow {
            var current = row
            var steps = 0
            while current.superNumber != 0, let parent = rows.first(where: { $0.number == current.superNumber }), steps < 64 {
                current = parent
                steps += 1
            }
            return current
        }
        let rootTables = try SchemaInference.rootTables(rows: rows, schema: sqlite, db: db) { row in
            Self.tableCandidates(storeName: row.name, entity: numbered.first { $0.row.number == row.number }?.entity)
        }
        func rootTable(of row: StoreMetadata.EntityRow) -> String {
            let root = rootRow(of: row)
            return rootTables[root.number] ?? "Z" + root.name.uppercased()
        }

        var explained: [String: Set<String>] = [:]
        var joinTables: Set<String> = []
        var collisionCache: [String: [String: Set<Int>]] = [:]
        var mapped: [Entity] = []
        for (row, entity) in numbered {
            let tableName = rootTable(of: row)
            guard let table = sqlite.tables[tableName] else {
                warnings.append("entity \(entity.name): its table \(tableName) is missing")
                continue
            }
            explained[tableName, default: ["Z_PK", "Z_ENT", "Z_OPT"]].formUnion([])
            let numbers = hierarchy(of: row.number)
            // Attributes.
            var attributes: [Attribute] = []
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                let column = try Self.column(
                    for: attribute.name, renamed: attribute.renamingIdentifier, in: table, entityNumbers: numbers, db: db, cache: &collisionCache)
                if let column {
                    explained[tableName, default: []].insert(column)
                } else {
                    warnings.append("\(entity.name).\(attribute.name) has no column in \(tableName) (the model and the store differ)")
                }
                attributes.append(Attribute(description: attribute, column: column))
            }
            // Relationships.
            var relationships: [Relationship] = []
            for relationship in model.allRelationships(of: entity) {
                guard let destination = model.entity(named: relationship.destination), let destinationNumber = number(of: destination.name),
                    let destinationRow = rows.first(where: { $0.number == destinationNumber })
                else {
                    relationships.append(
                        Relationship(
                            description: relationship, storage: .missing("destination \(relationship.destination) is not in the store"),
                            destinationNumbers: [], destinationTable: nil))
                    continue
                }
                let destinationNumbers = hierarchy(of: destinationNumber)
                let destinationTable = rootTable(of: destinationRow)
                let inverse = relationship.inverse.flatMap { name in model.allRelationships(of: destination).first { $0.name == name } }
                let storage: Storage
                if !relationship.isToMany {
                    let column = "Z" + relationship.name.uppercased()
                    if table.columnSet.contains(column) {
                        let entityColumn = table.columns.map(\.name).first {
                            $0.hasSuffix("_" + relationship.name.uppercased()) && $0.range(of: #"^Z\d+_"#, options: .regularExpression) != nil
                        }
                        explained[tableName, default: []].formUnion([column] + (entityColumn.map { [$0] } ?? []))
                        storage = .foreignKey(column: column, entityColumn: entityColumn)
                    } else {
                        storage = .missing("no column \(column) in \(tableName)")
                    }
                } else if let inverse, !inverse.isToMany {
                    let column = "Z" + inverse.name.uppercased()
                    if sqlite.tables[destinationTable]?.columnSet.contains(column) == true {
                        let order = "Z_FOK_" + inverse.name.uppercased()
                        let orderColumn = relationship.isOrdered && sqlite.tables[destinationTable]?.columnSet.contains(order) == true ? order : nil
                        if let orderColumn { explained[destinationTable, default: []].insert(orderColumn) }
                        storage = .inverseForeignKey(column: column, orderColumn: orderColumn)
                    } else {
                        storage = .missing("no column \(column) in \(destinationTable)")
                    }
                } else {
                    storage = Self.joinTable(
                        relationship: relationship, inverse: inverse, entity: entity, destination: destination, model: model, number: number,
                        sqlite: sqlite)
                    if case .joinTable(let join, _, _, _) = storage { joinTables.insert(join) }
                }
                if case .missing(let reason) = storage { warnings.append("\(entity.name).\(relationship.name): \(reason)") }
                relationships.append(
                    Relationship(
                        description: relationship, storage: storage, destinationNumbers: destinationNumbers, destinationTable: destinationTable))
            }
            mapped.append(
                Entity(
                    description: entity, number: row.number, storeName: row.name, table: tableName, hierarchyNumbers: numbers,
                    attributes: attributes, relationships: relationships))
        }
        var unexplained: [String: [String]] = [:]
        for tableName in Set(mapped.map(\.table)).sorted() {
            guard let table = sqlite.tables[tableName] else { continue }
            let known = explained[tableName, default: []].union(["Z_PK", "Z_ENT", "Z_OPT"])
            let extra = table.columns.map(\.name).filter { !known.contains($0) && !$0.hasPrefix("Z_FOK_") }
            if !extra.isEmpty {
                unexplained[tableName] = extra
                warnings.append("\(tableName) has columns the model does not explain: \(extra.joined(separator: ", "))")
            }
        }
        entities = mapped.sorted { $0.number < $1.number }
        self.joinTables = joinTables.sorted()
        unexplainedColumns = unexplained
        self.warnings = warnings
        reindex()
    }

    /// The column of an attribute: `Z<NAME>`, or a renamed one, or — when siblings sharing the table declare the same
    /// name (`ZTITLE`, `ZTITLE1`, …) — the candidate whose non-null values belong to this entity's rows.
    private static func column(
        for name: String, renamed: String?, in table: SQLiteSchema.Table, entityNumbers: [Int], db: Database,
        cache: inout [String: [String: Set<Int>]]
    ) throws -> String? {
        for base in [name, renamed].compactMap({ $0 }).map({ "Z" + $0.uppercased() }) {
            let candidates = [base] + (1...9).map { "\(base)\($0)" }.filter { table.columnSet.contains($0) }
            guard table.columnSet.contains(base) else { continue }
            if candidates.count == 1 { return base }
            // Several same-named columns: see which entities' rows use each.
            var best: String?
            for candidate in candidates {
                let used: Set<Int>
                if let known = cache[table.name]?[candidate] {
                    used = known
                } else {
                    used = Set(
                        try DatabaseValue.fetchAll(
                            db,
                            sql:
                                "SELECT DISTINCT Z_ENT FROM \(table.name.quotedDatabaseIdentifier) WHERE \(candidate.quotedDatabaseIdentifier) IS NOT NULL"
                        ).compactMap { $0.integerValue.flatMap { Int(exactly: $0) } })
                    cache[table.name, default: [:]][candidate] = used
                }
                if !used.isEmpty, used.isSubset(of: Set(entityNumbers)) { best = best ?? candidate }
            }
            return best ?? base
        }
        return nil
    }

    /// The names a root entity's table may have: `Z` + its store name, or (renamed) + its model name or renaming identifier.
    static func tableCandidates(storeName: String, entity: EntityDescription?) -> [String] {
        [storeName, entity?.name, entity?.renamingIdentifier].compactMap { $0 }.map { "Z" + $0.uppercased() }
    }

    /// The table of a root entity among its candidate names (without looking at rows).
    static func tableName(storeName: String, entity: EntityDescription?, sqlite: SQLiteSchema) -> String {
        let candidates = tableCandidates(storeName: storeName, entity: entity)
        return candidates.first { sqlite.tables[$0] != nil } ?? candidates[0]
    }

    /// The join table of a many-to-many (or inverse-less to-many) relationship, found by introspection: for a
    /// relationship R on E with inverse I on D, the table is `Z_<nE><R>` or `Z_<nD><I>` (plus a collision suffix), with
    /// the E side in column `Z_<nE><I>` and the D side in `Z_<nD><R>`, where the numbers are those of the entities
    /// that declare R and I.
    private static func joinTable(
        relationship: RelationshipDescription, inverse: RelationshipDescription?, entity: EntityDescription,
        destination: EntityDescription, model: ManagedObjectModel, number: (String) -> Int?, sqlite: SQLiteSchema
    ) -> Storage {
        let declaringE = model.ancestry(of: entity).last { $0.relationships.contains { $0.name == relationship.name } } ?? entity
        let declaringD =
            inverse.flatMap { inverse in model.ancestry(of: destination).last { $0.relationships.contains { $0.name == inverse.name } } }
            ?? destination
        guard let nE = number(declaringE.name), let nD = number(declaringD.name) else { return .missing("no entity number") }
        let r = relationship.name.uppercased()
        let i = (inverse?.name ?? relationship.name).uppercased()
        let sourceColumn = inverse?.name == relationship.name && declaringE.name == declaringD.name ? "Z_\(nE)\(r)" : "Z_\(nE)\(i)"
        let destinationColumn = inverse?.name == relationship.name && declaringE.name == declaringD.name ? "REFLEXIVE" : "Z_\(nD)\(r)"
        var names = ["Z_\(nE)\(r)", "Z_\(nD)\(i)"]
        for base in names { names += (1...9).map { "\(base)\($0)" } }
        for name in names {
            guard let table = sqlite.tables[name] else { continue }
            guard let (source, target) = keyColumns(of: table, expected: (sourceColumn, destinationColumn), relationship: r, nE: nE, nD: nD)
            else { continue }
            let order = "Z_FOK_" + target.dropFirst(2)
            let orderColumn = relationship.isOrdered && table.columnSet.contains(String(order)) ? String(order) : nil
            return .joinTable(table: name, sourceColumn: source, destinationColumn: target, orderColumn: orderColumn)
        }
        return .missing("no join table \(names.prefix(2).joined(separator: " or "))")
    }

    /// The (source, destination) key columns of a join table: the expected names when both are there, else by rule —
    /// `REFLEXIVE` is always the destination side; columns `Z_<n>…` belong to entity `n`; between two columns of the
    /// same entity, the one named after the relationship (`Z_<n><R>`) holds the destination, as in a many-to-many table.
    static func keyColumns(of table: SQLiteSchema.Table, expected: (String, String), relationship r: String, nE: Int, nD: Int) -> (String, String)? {
        if expected.0 != expected.1, table.columnSet.contains(expected.0), table.columnSet.contains(expected.1) { return expected }
        let keys = table.columns.map(\.name).filter { !$0.hasPrefix("Z_FOK_") }
        guard keys.count == 2 else { return nil }
        let (first, second) = (keys[0], keys[1])
        if second == "REFLEXIVE" { return (first, second) }
        if first == "REFLEXIVE" { return (second, first) }
        let firstIsE = SchemaInference.column(first, belongsTo: nE)
        let secondIsE = SchemaInference.column(second, belongsTo: nE)
        if nE != nD {
            if firstIsE && !secondIsE { return (first, second) }
            if secondIsE && !firstIsE { return (second, first) }
        }
        if first == "Z_\(nD)\(r)" { return (second, first) }
        if second == "Z_\(nD)\(r)" { return (first, second) }
        return (first, second)
    }
}
