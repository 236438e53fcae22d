import FerryCore
import GRDB

/// A row of the store that no entity of its mapping reads: an object a dump or copy leaves out.
public struct UncarriedObject: Sendable, Hashable {
    /// The table it is in (for a missing table, the table its entity would have).
    public var table: String
    /// Its `Z_PK`; `nil` when the whole table is missing and no row can be named.
    public var primaryKey: Int64?
    /// Why it is not carried, naming its `Z_ENT` and entity where known, and what would carry it.
    public var reason: String

    /// `ZCAR Z_PK 7: …`, for messages.
    public var description: String {
        "\(table)" + (primaryKey.map { " Z_PK \($0)" } ?? "") + ": \(reason)"
    }

    /// The warning `dump` and `copy` give for it: `not carried: ZCAR Z_PK 7: …`.
    public var warning: String { "not carried: \(description)" }
}

extension CoreDataStore {
    /// Calls `body` with every object of the store that reading its objects leaves out, in table and key order.
    ///
    /// Those are rows whose `Z_ENT` is no entity of `Z_PRIMARYKEY` (or `Z_PRIMARYKEY` is empty), rows of an entity
    /// the model lacks or that live in another table than their entity's, and entities whose table is missing.
    public func forEachUncarriedObject(_ body: (UncarriedObject) throws -> Void) throws {
        var numbersByTable: [String: Set<Int>] = [:]
        for entity in schema.entities { numbersByTable[entity.table, default: []].insert(entity.number) }
        let entityRows = Dictionary(metadata.entityRows.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        var numbersSeen: Set<Int64> = []
        let entityTables = sqlite.tables.values.filter(\.isEntityTable).sorted { $0.name < $1.name }
        try connection.read { db in
            for table in entityTables {
                // A table whose rows the reads so far went through, every one of them, holds none left out: the keys
                // from min to max (an O(log n) look-up) or, with gaps, the row count (the narrowest index's) tell.
                if try Self.allRowsRead(table.name, rowsRead(inTable: table.name), db: db) { continue }
                let read = (numbersByTable[table.name] ?? []).sorted()
                let quoted = table.name.quotedDatabaseIdentifier
                let condition = read.isEmpty ? "" : " WHERE Z_ENT IS NULL OR Z_ENT NOT IN (\(read.map(String.init).joined(separator: ",")))"
                let statement = try db.makeStatement(sql: "SELECT Z_PK, Z_ENT FROM \(quoted)\(condition) ORDER BY Z_PK")
                let cursor = try Row.fetchCursor(statement)
                while let row = try cursor.next() {
                    let number = row.value(at: 1).integerValue
                    if let number { numbersSeen.insert(number) }
                    let reason: String
                    if let number, let entity = Int(exactly: number).flatMap({ entityRows[$0] }) {
                        if let mapped = schema.entity(number: entity.number) {
                            reason = "Z_ENT \(number) is entity \(mapped.description.name), whose rows are in \(mapped.table), not here"
                        } else {
                            reason =
                                "Z_ENT \(number) is entity \(entity.name), which the model does not have; give the model that has it "
                                + "(--model) or let Ferry infer one (--infer-model)"
                        }
                    } else if let number {
                        reason =
                            "Z_ENT \(number) is no entity of Z_PRIMARYKEY"
                            + (entityRows.isEmpty ? " (Z_PRIMARYKEY is empty: the store's bookkeeping is damaged)" : "")
                    } else {
                        reason = "its Z_ENT is empty"
                    }
                    try body(UncarriedObject(table: table.name, primaryKey: row.value(at: 0).integerValue, reason: reason))
                }
            }
        }
        // Root entities the mapping has no table for, whose rows no table above holds (a table skipped above holds only
        // rows of mapped entities, so none of these).
        for row in metadata.entityRows where !row.isAncillary && row.superNumber == 0 && schema.entity(number: row.number) == nil {
            guard !numbersSeen.contains(Int64(row.number)) else { continue }
            let table = "Z" + row.name.uppercased()
            guard sqlite.tables[table] == nil else { continue }
            try body(
                UncarriedObject(
                    table: table, primaryKey: nil,
                    reason: "entity \(row.name) (Z_ENT \(row.number)) has no table in the store; Z_PRIMARYKEY says up to "
                        + "\(row.maxPrimaryKey) objects of it and its sub-entities were made, and none of them can be read"))
        }
    }

    /// Whether `read` rows (those the reads went through) are all the rows of `table`.
    private static func allRowsRead(_ table: String, _ read: Int?, db: Database) throws -> Bool {
        guard let read else { return false }
        let quoted = table.quotedDatabaseIdentifier
        // Primary keys are distinct integers: as many rows read as keys from min to max means every key has its row.
        // Two sub-queries: SQLite answers a lone min() or max() of the key from the b-tree's ends, both at once by a scan.
        if let range = try Row.fetchOne(db, sql: "SELECT (SELECT min(Z_PK) FROM \(quoted)), (SELECT max(Z_PK) FROM \(quoted))"),
            let low = range.value(at: 0).integerValue, let high = range.value(at: 1).integerValue,
            case let (span, overflow) = high.subtractingReportingOverflow(low), !overflow, span < Int64.max, Int64(read) == span + 1
        {
            return true
        }
        return try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoted)") == read
    }
}
