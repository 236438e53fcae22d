import Foundation
import GRDB

/// Guesses a model from a store's SQLite schema alone, when no model can be found.
///
/// Nothing stored is dropped: every column becomes an attribute or a relationship, every join table a to-many
/// relationship.
///
/// - Entities and their hierarchy come from `Z_PRIMARYKEY`; a root whose `Z` + name table is missing (a renamed
///   entity) gets the unclaimed entity table whose rows carry its `Z_ENT`.
/// - Attributes come from the columns of each root table (`ZNUMBERPLATE` becomes `numberplate`: the original
///   capitalisation is lost), typed by the declared column type, attached to the root entity (columns do not say which
///   sub-entity owns them). Ordering keys (`Z_FOK_*`) are kept as integer attributes.
/// - An INTEGER column with Core Data's foreign-key index (`<TABLE>_<COLUMN>_INDEX`) is a to-one relationship when its
///   destination can be told: from a `Z<n>_<NAME>` entity column, from an entity of the same name, or from the data
///   (the one entity table that holds every key). Otherwise it stays an integer attribute.
/// - A `Z_<n><NAME>` table with two key columns is a to-many relationship `name` of entity `n`.
enum SchemaInference {
    static func infer(metadata: StoreMetadata, schema: SQLiteSchema, db: Database) throws -> (ManagedObjectModel, [String]) {
        let rows = metadata.entityRows.filter { !$0.isAncillary }
        var notes: [String] = []
        let rootTables = try Self.rootTables(rows: rows, schema: schema, db: db) { ["Z" + $0.name.uppercased()] }
        var entities: [EntityDescription] = rows.map { row in
            EntityDescription(name: row.name, parentName: rows.first { $0.number == row.superNumber && row.superNumber != 0 }?.name)
        }
        for (index, row) in rows.enumerated() where row.superNumber == 0 {
            guard let table = rootTables[row.number].flatMap({ schema.tables[$0] }) else { continue }
            for (column, type) in table.columns where column.hasPrefix("Z") && !["Z_PK", "Z_ENT", "Z_OPT"].contains(column) {
                if column.range(of: #"^Z\d+_"#, options: .regularExpression) != nil { continue }  // an entity column
                let name = String(column.dropFirst()).lowercased()
                if type.contains("INT"), table.indexes.contains("\(table.name)_\(column)_INDEX") {
                    if let destination = try destination(of: column, in: table, rows: rows, rootTables: rootTables, schema: schema, db: db) {
                        entities[index].relationships.append(RelationshipDescription(name: name, destination: destination, maxCount: 1))
                        continue
                    }
                    notes.append("\(table.name).\(column) looks like a foreign key to an entity that cannot be told; kept as an integer")
                }
                entities[index].attributes.append(AttributeDescription(name: name, type: Self.type(forDeclared: type)))
            }
        }
        // Join tables: Z_<n><NAME> with two key columns.
        for table in schema.tables.values.sorted(by: { $0.name < $1.name }) {
            guard let match = table.name.firstMatch(of: /^Z_(\d+)([A-Z0-9_]+)$/), let number = Int(match.1),
                let ownerIndex = rows.firstIndex(where: { $0.number == number })
            else { continue }
            let keys = table.columns.map(\.name).filter { !$0.hasPrefix("Z_FOK_") }
            guard keys.count == 2 else { continue }
            let other = keys.first { !Self.column($0, belongsTo: number) || $0 == "REFLEXIVE" } ?? keys[1]
            let destinationNumber = other == "REFLEXIVE" ? number : other.firstMatch(of: /^Z_(\d+)/).flatMap { Int($0.1) }
            guard let destination = rows.first(where: { $0.number == destinationNumber }) else { continue }
            let name = String(match.2).lowercased()
            guard !entities[ownerIndex].relationships.contains(where: { $0.name == name }) else { continue }
            entities[ownerIndex].relationships.append(
                RelationshipDescription(
                    name: name, destination: destination.name, isToMany: true, isOrdered: table.columns.contains { $0.name.hasPrefix("Z_FOK_") },
                    maxCount: 0))
        }
        return (ManagedObjectModel(entities: entities), notes)
    }

    /// Whether a join-table column names entity `number`'s side (`Z_<number><NAME>`, not `Z_<number><digit>…`).
    static func column(_ name: String, belongsTo number: Int) -> Bool {
        let prefix = "Z_\(number)"
        guard name.hasPrefix(prefix), let next = name.dropFirst(prefix.count).first else { return false }
        return !next.isNumber
    }

    /// Each root entity's table: the first of its candidate names that exists, else the unclaimed entity table whose
    /// rows carry its number (a renamed root entity).
    static func rootTables(
        rows: [StoreMetadata.EntityRow], schema: SQLiteSchema, db: Database, candidates: (StoreMetadata.EntityRow) -> [String]
    ) throws -> [Int: String] {
        var result: [Int: String] = [:]
        let roots = rows.filter { $0.superNumber == 0 }
        for row in roots {
            if let name = candidates(row).first(where: { schema.tables[$0] != nil }) { result[row.number] = name }
        }
        let claimed = Set(result.values)
        let unclaimed = schema.tables.values.filter { $0.isEntityTable && !claimed.contains($0.name) }
        for row in roots where result[row.number] == nil {
            for table in unclaimed.sorted(by: { $0.name < $1.name }) {
                let hit = try DatabaseValue.fetchOne(
                    db, sql: "SELECT 1 FROM \(table.name.quotedDatabaseIdentifier) WHERE Z_ENT = ? LIMIT 1", arguments: [row.number])
                if hit != nil {
                    result[row.number] = table.name
                    break
                }
            }
        }
        return result
    }

    /// The destination entity of a foreign-key column, when it can be told.
    private static func destination(
        of column: String, in table: SQLiteSchema.Table, rows: [StoreMetadata.EntityRow], rootTables: [Int: String], schema: SQLiteSchema,
        db: Database
    ) throws -> String? {
        let bare = String(column.dropFirst())
        // A Z<n>_<NAME> column names the declared destination's number.
        if let entityColumn = table.columns.map(\.name).first(where: { $0.hasSuffix("_" + bare) && $0.firstMatch(of: /^Z\d+_/) != nil }),
            let match = entityColumn.firstMatch(of: /^Z(\d+)_/), let number = Int(match.1), let row = rows.first(where: { $0.number == number })
        {
            return row.name
        }
        if let row = rows.first(where: { $0.name.uppercased() == bare }) { return row.name }
        // The data: the one root table that holds every stored key.
        var holders: [String] = []
        for (number, candidate) in rootTables.sorted(by: { $0.key < $1.key }) {
            let missing = try DatabaseValue.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM (SELECT DISTINCT \(column.quotedDatabaseIdentifier) AS k FROM \(table.name.quotedDatabaseIdentifier)
                    WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL) AS v
                    WHERE NOT EXISTS (SELECT 1 FROM \(candidate.quotedDatabaseIdentifier) AS d WHERE d.Z_PK = v.k)
                    """)?.integerValue
            if missing == 0, let row = rows.first(where: { $0.number == number }) { holders.append(row.name) }
        }
        return holders.count == 1 ? holders[0] : nil
    }

    static func type(forDeclared declared: String) -> AttributeType {
        if declared.contains("INT") { return .integer64 }
        if declared.contains("CHAR") || declared.contains("TEXT") { return .string }
        if declared.contains("TIMESTAMP") { return .date }
        if declared.contains("FLOAT") || declared.contains("REAL") || declared.contains("DOUB") { return .double }
        if declared.contains("DECIMAL") { return .decimal }
        if declared.contains("BLOB") { return .binaryData }
        return .undefined
    }
}
