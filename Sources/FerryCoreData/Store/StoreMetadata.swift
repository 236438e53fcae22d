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
        entityRows = rows
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
