import FerryCore
import FerryPlist
import Foundation
import GRDB

/// A store's bookkeeping: `Z_METADATA` (UUID and metadata plist) and `Z_PRIMARYKEY` (its entities).
public struct StoreMetadata: Sendable {
    /// One row of `Z_PRIMARYKEY`.
    public struct EntityRow: Sendable, Hashable {
        /// The entity number (`Z_ENT`).
        public var number: Int
        /// The entity's name when the store was created (`Z_NAME`; renamed entities keep it).
        public var name: String
        /// The parent entity's number, 0 for a root (`Z_SUPER`).
        public var superNumber: Int
        /// The highest primary key handed out (`Z_MAX`; only root rows carry it).
        public var maxPrimaryKey: Int64
        /// Whether this is one of Core Data's own entities (persistent history, CloudKit mirroring: 16000 and up).
        public var isAncillary: Bool { number >= 16000 }
    }

    /// The store UUID (`Z_UUID`), used in object-ID URIs.
    public var uuid: String
    /// `NSPersistenceFrameworkVersion`.
    public var frameworkVersion: Int?
    /// `NSStoreModelVersionHashes`: entity name → hash.
    public var modelVersionHashes: [String: [UInt8]]
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// The whole metadata plist.
    public var plist: PlistValue
    /// The entity rows, by number.
    public var entityRows: [EntityRow]

    init(_ db: Database, store: String) throws {
        guard try db.tableExists("Z_PRIMARYKEY"), try db.tableExists("Z_METADATA") else {
            throw CoreDataError(
                .notCoreData, "\(store): an SQLite database, but not a Core Data store (it has no Z_PRIMARYKEY and Z_METADATA tables)")
        }
        guard let row = try Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1") else {
            throw CoreDataError(.corrupt, "\(store): Z_METADATA is empty")
        }
        uuid = row.value(at: 0).textValue ?? ""
        let plistBytes = row.value(at: 1).bytesValue ?? []
        do {
            plist = plistBytes.isEmpty ? .dictionary([]) : try PlistDocument(bytes: plistBytes).value()
        } catch {
            throw CoreDataError(.corrupt, "\(store): Z_METADATA.Z_PLIST is not a property list: \(error.message)", cause: error)
        }
        if case .integer(let version)? = plist["NSPersistenceFrameworkVersion"] { frameworkVersion = Int(version) } else { frameworkVersion = nil }
        var hashes: [String: [UInt8]] = [:]
        if case .dictionary(let entries)? = plist["NSStoreModelVersionHashes"] {
            for entry in entries { if case .data(let bytes) = entry.value { hashes[entry.key] = bytes } }
        }
        modelVersionHashes = hashes
        var identifiers: [String] = []
        if case .array(let values)? = plist["NSStoreModelVersionIdentifiers"] {
            for value in values { if case .string(let text) = value { identifiers.append(text) } }
        }
        versionIdentifiers = identifiers
        var rows: [EntityRow] = []
        for row in try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
            guard let number = row.value(at: 0).integerValue, let name = row.value(at: 1).textValue, !name.isEmpty,
                let parsed = Int(exactly: number)
            else {
                throw CoreDataError(
                    .corrupt,
                    "\(store): Z_PRIMARYKEY has a row without an entity number and name (Z_ENT \(row.value(at: 0)), Z_NAME \(row.value(at: 1)))")
            }
            rows.append(
                EntityRow(
                    number: parsed, name: name, superNumber: row.value(at: 2).integerValue.flatMap { Int(exactly: $0) } ?? 0,
                    maxPrimaryKey: row.value(at: 3).integerValue ?? 0))
        }
        try Self.checkHierarchy(rows, store: store)
        entityRows = rows
    }

    /// Refuses entity rows whose bookkeeping contradicts itself: a repeated `Z_ENT` or `Z_NAME`, a `Z_SUPER` naming no
    /// entity, or a parent chain that comes back to where it started (a self-reference or a longer loop).
    ///
    /// Everything that walks the hierarchy (sub-entities, root tables, inference) relies on it being a forest; a loop
    /// would make those walks endless.
    static func checkHierarchy(_ rows: [EntityRow], store: String) throws {
        var byNumber: [Int: EntityRow] = [:]
        var names: [String: Int] = [:]
        for row in rows {
            if let earlier = byNumber[row.number] {
                throw CoreDataError(
                    .corrupt,
                    "\(store): Z_PRIMARYKEY has two rows for Z_ENT \(row.number) (\(earlier.name) and \(row.name)); "
                        + "each entity has one row. The store's bookkeeping is damaged: restore it from a backup")
            }
            if let earlier = names[row.name] {
                throw CoreDataError(
                    .corrupt,
                    "\(store): Z_PRIMARYKEY names entity \(row.name) twice (Z_ENT \(earlier) and \(row.number)). "
                        + "The store's bookkeeping is damaged: restore it from a backup")
            }
            byNumber[row.number] = row
            names[row.name] = row.number
        }
        // Each row is walked up at most once: a row whose chain reached a root is marked done, so the whole check
        // is linear in the number of rows.
        var done: Set<Int> = []
        for row in rows where !done.contains(row.number) {
            var path: [EntityRow] = []
            var onPath: Set<Int> = []
            var current = row
            while current.superNumber != 0, !done.contains(current.number) {
                path.append(current)
                onPath.insert(current.number)
                guard let parent = byNumber[current.superNumber] else {
                    throw CoreDataError(
                        .corrupt,
                        "\(store): Z_PRIMARYKEY gives entity \(current.name) (Z_ENT \(current.number)) the parent Z_SUPER "
                            + "\(current.superNumber), which is no entity of the store. The store's bookkeeping is damaged: "
                            + "restore it from a backup")
                }
                if onPath.contains(parent.number) {
                    let loop = path.drop { $0.number != parent.number } + [parent]
                    let names = loop.map { "\($0.name) (Z_ENT \($0.number))" }.joined(separator: " → ")
                    throw CoreDataError(
                        .corrupt,
                        "\(store): the entity hierarchy in Z_PRIMARYKEY is a loop: \(names); every parent chain "
                            + "(Z_SUPER) must end at a root entity (Z_SUPER 0). The store's bookkeeping is damaged: restore it "
                            + "from a backup")
                }
                current = parent
            }
            done.formUnion(onPath)
            done.insert(current.number)
        }
    }
}

/// The tables, columns and indexes of an SQLite database.
struct SQLiteSchema: Sendable {
    struct Table: Sendable {
        var name: String
        /// Column name → declared type, in table order.
        var columns: [(name: String, type: String)]
        var columnSet: Set<String>
        var indexes: [String]

        /// Whether it holds objects of entities: `Z<NAME>` (not a `Z_` bookkeeping or join table) with `Z_PK` and
        /// `Z_ENT`.
        var isEntityTable: Bool {
            name.hasPrefix("Z") && !name.hasPrefix("Z_") && columnSet.isSuperset(of: ["Z_PK", "Z_ENT"])
        }
    }

    var tables: [String: Table] = [:]

    init(_ db: Database) throws {
        let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        for name in names {
            let columns = try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_info(?)", arguments: [name]).map { row -> (String, String) in
                (row.value(at: 0).textValue ?? "", (row.value(at: 1).textValue ?? "").uppercased())
            }
            let indexes = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", arguments: [name])
            tables[name] = Table(name: name, columns: columns, columnSet: Set(columns.map(\.0)), indexes: indexes)
        }
    }
}
