import FerryCore
import FerryPlist
import Foundation
import GRDB

/// Writes Core Data SQLite stores with real SQLite, following `../shared/docs/formats.md` §1 — bookkeeping tables,
/// one table per root entity, `Z_ENT` numbering, column naming and collisions, foreign keys, polymorphic entity
/// columns, ordering keys, join tables, external data — together with the model as an `.xcdatamodeld`.
///
/// ```swift
/// let builder = CoreDataStoreBuilder(entities: [EntitySpec("Car", attributes: [AttributeSpec("name", "String")])])
/// let car = builder.insert("Car", ["name": .text("Beetle")])
/// try builder.write(to: directory, storeName: "Cars.sqlite")
/// ```
///
/// Where formats.md marks a layout as unverified (to-many relationships without an inverse), the builder follows its
/// best description: a join table `Z_<n><REL>` with the columns `Z_<n><REL>` and `Z_<m><REL>`.
public final class CoreDataStoreBuilder {
    public let entities: [EntitySpec]
    public var storeUUID: String
    public var frameworkVersion: Int
    /// App-defined keys added to the metadata plist.
    public var metadataExtras: [PlistValue.Entry] = []

    private var nextKey: [String: Int64] = [:]
    private var rows: [StoreObject: [String: StoreValue]] = [:]
    private var order: [StoreObject] = []
    private var links: [StoreObject: [String: [StoreObject]]] = [:]
    private var versions: [StoreObject: Int64] = [:]
    private var mirrored: [(StoreObject, String)] = []

    /// Creates a builder for a model.
    public init(entities: [EntitySpec], storeUUID: String = "6A0B7C1D-0000-4000-8000-000000000001", frameworkVersion: Int = 1345) {
        self.entities = entities
        self.storeUUID = storeUUID
        self.frameworkVersion = frameworkVersion
    }

    // MARK: Objects

    /// Inserts an object; its primary key comes from its inheritance root's sequence (one key space per table), or is
    /// `primaryKey` (the sequence goes on after it).
    @discardableResult
    public func insert(_ entity: String, _ values: [String: StoreValue] = [:], version: Int64 = 1, primaryKey: Int64? = nil) -> StoreObject {
        let root = layout.root(of: entity)
        let key = primaryKey ?? (nextKey[root] ?? 0) + 1
        nextKey[root] = max(nextKey[root] ?? 0, key)
        let object = StoreObject(entity: entity, primaryKey: key)
        rows[object] = values
        versions[object] = version
        order.append(object)
        return object
    }

    /// Sets an attribute value.
    public func set(_ object: StoreObject, _ attribute: String, _ value: StoreValue) { rows[object, default: [:]][attribute] = value }

    /// Relates an object to targets, keeping the inverse side consistent (as a context would).
    public func relate(_ object: StoreObject, _ relationship: String, _ targets: [StoreObject]) {
        links[object, default: [:]][relationship] = targets
        guard let spec = layout.relationship(relationship, of: object.entity), let inverse = spec.inverse,
            let inverseSpec = layout.relationship(inverse, of: spec.destination)
        else { return }
        for target in targets {
            if inverseSpec.isToMany {
                if !(links[target]?[inverse]?.contains(object) ?? false) { links[target, default: [:]][inverse, default: []].append(object) }
            } else {
                links[target, default: [:]][inverse] = [object]
            }
        }
    }

    /// Relates an object to one target.
    public func relate(_ object: StoreObject, _ relationship: String, _ target: StoreObject) { relate(object, relationship, [target]) }

    /// Records the CloudKit record name NSPersistentCloudKitContainer gave an object, in `ANSCKRECORDMETADATA`
    /// (the columns formats.md §1 lists), as a mirrored store holds it.
    public func mirror(_ object: StoreObject, recordName: String) { mirrored.append((object, recordName)) }

    // MARK: Writing

    /// How the store's journal is left.
    public enum Journal: Sendable {
        /// WAL mode, checkpointed: no `-wal` file remains (a cleanly closed store).
        case walCheckpointed
        /// WAL mode with every row still in the `-wal` file (the main file holds only the schema).
        case walPending
        /// Rollback-journal mode.
        case rollback
    }

    /// Writes the store, its support folder and its model (`<modelName>.xcdatamodeld`) into a directory.
    /// - Returns: the store's path.
    @discardableResult
    public func write(
        to directory: String, storeName: String = "Store.sqlite", modelName: String? = "Model", journal: Journal = .walCheckpointed
    ) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/\(storeName)"
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let base = URL(fileURLWithPath: storeName).deletingPathExtension().lastPathComponent
        let external = "\(directory)/.\(base)_SUPPORT/_EXTERNAL_DATA"
        try? FileManager.default.removeItem(atPath: "\(directory)/.\(base)_SUPPORT")

        var configuration = Configuration()
        configuration.journalMode = journal == .rollback ? .default : .wal
        let staging = journal == .walPending ? "\(directory)/.staging-\(storeName)" : path
        if journal == .walPending { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: staging + suffix) } }
        let queue = try DatabaseQueue(path: staging, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.inTransaction {
                try createSchema(db)
                return .commit
            }
            if journal == .walPending { try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try db.inTransaction {
                try insertRows(db, externalDirectory: external)
                try insertMirrorMetadata(db)
                return .commit
            }
        }
        if journal == .walPending {
            // Copy while the connection is open: the copy keeps its rows in the -wal, as a live app's store does.
            try FileManager.default.copyItem(atPath: staging, toPath: path)
            try FileManager.default.copyItem(atPath: staging + "-wal", toPath: path + "-wal")
        }
        try queue.close()
        if journal == .walPending { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: staging + suffix) } }
        if let modelName { try ModelXMLWriter.writeBundle(entities: entities, name: modelName, in: directory) }
        return path
    }

    private lazy var layout = StoreLayout(entities: entities)

    private func insertMirrorMetadata(_ db: Database) throws {
        guard !mirrored.isEmpty else { return }
        try db.execute(
            sql: """
                CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER,
                    ZCKRECORDNAME VARCHAR, ZRECORDZONE INTEGER, ZNEEDSUPLOAD INTEGER, ZNEEDSCLOUDDELETE INTEGER, ZSYSTEMFIELDSASSET INTEGER,
                    UNIQUE (ZENTITYID, ZENTITYPK))
                """)
        for (index, (object, name)) in mirrored.enumerated() {
            try db.execute(
                sql:
                    "INSERT INTO ANSCKRECORDMETADATA (Z_PK, Z_ENT, Z_OPT, ZENTITYID, ZENTITYPK, ZCKRECORDNAME, ZNEEDSUPLOAD) VALUES (?, 17012, 1, ?, ?, ?, 0)",
                arguments: [index + 1, layout.number(of: object.entity), object.primaryKey, name])
        }
    }

    private func createSchema(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try db.execute(sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        for table in layout.tables {
            let columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + table.columns.map { "\($0.name) \($0.sqlType)" }
            try db.execute(sql: "CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )")
            for column in table.columns where column.isForeignKey {
                try db.execute(sql: "CREATE INDEX \(table.name)_\(column.name)_INDEX ON \(table.name) (\(column.name))")
            }
            if table.entityCount > 1 { try db.execute(sql: "CREATE INDEX \(table.name)_Z_ENT_INDEX ON \(table.name) (Z_ENT)") }
        }
        for join in layout.joinTables {
            var columns = ["\(join.sourceColumn) INTEGER", "\(join.destinationColumn) INTEGER"]
            columns += [join.sourceOrderColumn, join.destinationOrderColumn].compactMap { $0.map { "\($0) INTEGER" } }
            try db.execute(
                sql: "CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")), PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn)) )"
            )
            try db.execute(
                sql: "CREATE INDEX \(join.name)_\(join.destinationColumn)_INDEX ON \(join.name) (\(join.destinationColumn), \(join.sourceColumn))")
        }
    }

    private func insertRows(_ db: Database, externalDirectory: String) throws {
        for object in order {
            let table = layout.table(of: object.entity)
            var names = ["Z_PK", "Z_ENT", "Z_OPT"]
            var values: [DatabaseValue] = [
                object.primaryKey.databaseValue, layout.number(of: object.entity).databaseValue, (versions[object] ?? 1).databaseValue,
            ]
            for (attribute, column) in layout.attributeColumns(of: object.entity) {
                guard let value = rows[object]?[attribute] else { continue }
                names.append(column)
                values.append(try encode(value, externalDirectory: externalDirectory))
            }
            for placement in layout.toOneColumns(of: object.entity) {
                guard let target = links[object]?[placement.relationship]?.first else { continue }
                names.append(placement.column)
                values.append(target.primaryKey.databaseValue)
                if let entityColumn = placement.entityColumn {
                    names.append(entityColumn)
                    values.append(layout.number(of: target.entity).databaseValue)
                }
            }
            // Ordering keys of ordered to-many relationships stored through this object's to-one inverse.
            for ordering in layout.orderColumns(of: object.entity) {
                guard let owner = links[object]?[ordering.toOne]?.first,
                    let index = links[owner]?[ordering.toMany]?.firstIndex(of: object)
                else { continue }
                names.append(ordering.column)
                values.append(Int64(1024 * (index + 1)).databaseValue)
            }
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            try db.execute(
                sql: "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(placeholders))", arguments: StatementArguments(values))
        }
        for join in layout.joinTables {
            for object in order where layout.entity(object.entity, isA: join.sourceEntity) {
                for (index, target) in (links[object]?[join.relationship] ?? []).enumerated() {
                    var names = [join.sourceColumn, join.destinationColumn]
                    var values = [object.primaryKey.databaseValue, target.primaryKey.databaseValue]
                    if let column = join.destinationOrderColumn {
                        names.append(column)
                        values.append(Int64(1024 * (index + 1)).databaseValue)
                    }
                    if let column = join.sourceOrderColumn, let inverse = join.inverse,
                        let position = links[target]?[inverse]?.firstIndex(of: object)
                    {
                        names.append(column)
                        values.append(Int64(1024 * (position + 1)).databaseValue)
                    }
                    let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
                    try db.execute(
                        sql: "INSERT INTO \(join.name) (\(names.joined(separator: ", "))) VALUES (\(placeholders))",
                        arguments: StatementArguments(values))
                }
            }
        }
        for entity in layout.ordered {
            let isRoot = entity.parent == nil
            let max = isRoot ? (nextKey[entity.name] ?? 0) : 0
            try db.execute(
                sql: "INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)",
                arguments: [
                    layout.number(of: entity.name), entity.renamingIdentifier ?? entity.name, entity.parent.map { layout.number(of: $0) } ?? 0, max,
                ])
        }
        try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, ?, ?)", arguments: [storeUUID, Data(metadataPlist())])
    }

    /// The metadata plist, `Z_METADATA.Z_PLIST` (formats.md §1.3).
    ///
    /// The version hashes are SHA-256 of the entity names, not Core Data's own.
    private func metadataPlist() -> [UInt8] {
        let hashes = layout.ordered.map { entity in
            PlistValue.Entry(key: entity.name, value: .data(SHA256Hasher.digest(Array(entity.name.utf8)).bytes))
        }
        var entries: [PlistValue.Entry] = [
            .init(key: "NSPersistenceFrameworkVersion", value: .integer(Int64(frameworkVersion))),
            .init(key: "NSStoreModelVersionHashes", value: .dictionary(hashes)),
            .init(key: "NSStoreModelVersionHashesVersion", value: .integer(3)),
            .init(key: "NSStoreModelVersionIdentifiers", value: .array([.string("")])),
            .init(key: "NSStoreType", value: .string("SQLite")), .init(key: "_NSAutoVacuumLevel", value: .string("2")),
        ]
        entries += metadataExtras
        return BinaryPlistWriter.write(.dictionary(entries))
    }

    private func encode(_ value: StoreValue, externalDirectory: String) throws -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let number): return number.databaseValue
        case .real(let number): return number.databaseValue
        case .text(let text): return text.databaseValue
        case .blob(let bytes): return Data(bytes).databaseValue
        case .bool(let flag): return Int64(flag ? 1 : 0).databaseValue
        case .date(let seconds): return seconds.databaseValue
        case .uuid(let uuid):
            return withUnsafeBytes(of: uuid.uuid) { Data($0) }.databaseValue
        case .inlineMarked(let bytes): return Data([0x01] + bytes).databaseValue
        case .external(let bytes, let uuid, let writeFile):
            if writeFile {
                try FileManager.default.createDirectory(atPath: externalDirectory, withIntermediateDirectories: true)
                try Data(bytes).write(to: URL(fileURLWithPath: "\(externalDirectory)/\(uuid.uuidString)"))
            }
            return Data([0x02] + Array(uuid.uuidString.utf8) + [0x00]).databaseValue
        }
    }
}
