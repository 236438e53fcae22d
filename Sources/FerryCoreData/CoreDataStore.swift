import FerryCore
import Foundation
import GRDB
import Synchronization

/// A Core Data SQLite store opened for reading, on Linux, without the app and without modifying any of its files.
///
/// ```swift
/// let store = try CoreDataStore(path: "CarsTrucksBuses.sqlite")
/// print(store.model.source)                       // where the model came from
/// try store.forEachObject(entity: "Note") { note in print(note.uri) }
/// ```
public final class CoreDataStore: @unchecked Sendable {
    /// The store's files.
    public let files: StoreFiles
    /// `Z_METADATA` and `Z_PRIMARYKEY`.
    public let metadata: StoreMetadata
    /// The model and where it came from.
    public let model: LoadedModel
    /// How the model maps onto the tables.
    public let schema: StoreSchema
    let connection: StoreConnection
    let sqlite: SQLiteSchema

    /// Opens a store.
    /// - Parameters:
    ///   - path: the SQLite file.
    ///   - model: which model to use; by default model files beside the store, else the store's model cache, else a
    ///     model inferred from the schema.
    ///   - temporaryDirectory: where a store with a WAL is copied to be read.
    /// - Throws: ``CoreDataError`` naming the file for anything that is not a readable Core Data store.
    public init(path: String, model choice: ModelChoice = .automatic, temporaryDirectory: String? = nil) throws {
        files = try StoreFiles(path: path)
        connection = try StoreConnection(files: files, temporaryDirectory: temporaryDirectory)
        let files = self.files
        (metadata, sqlite, model, schema) = try connection.read { db in
            let metadata = try StoreMetadata(db, store: files.store)
            let sqlite = try SQLiteSchema(db)
            var model = try ModelLocator.load(choice, files: files, metadata: metadata, schema: sqlite, db: db)
            model.notes += model.model.notes
            let schema = try StoreSchema(model: model.model, metadata: metadata, sqlite: sqlite, db: db)
            return (metadata, sqlite, model, schema)
        }
    }

    /// The number of rows of one concrete entity (`Z_ENT = n`).
    ///
    /// Every entity table is counted by `Z_ENT` once, on first use, and kept: a copy asks for the counts for its
    /// progress and again for its mapping's first pass, and a count scans the table.
    public func count(of entity: StoreSchema.Entity) throws -> Int {
        if let counts = objectCounts.withLock({ $0 }) { return counts[ObjectCountKey(table: entity.table, number: entity.number)] ?? 0 }
        var counts: [ObjectCountKey: Int] = [:]
        try connection.read { db in
            for table in Set(schema.entities.map(\.table)).sorted() {
                let rows = try Row.fetchAll(db, sql: "SELECT Z_ENT, count(*) FROM \(table.quotedDatabaseIdentifier) GROUP BY Z_ENT")
                for row in rows {
                    guard let number = row.value(at: 0).integerValue.flatMap({ Int(exactly: $0) }), let count = row.value(at: 1).integerValue
                    else { continue }
                    counts[ObjectCountKey(table: table, number: number)] = Int(count)
                }
            }
        }
        objectCounts.withLock { $0 = counts }
        return counts[ObjectCountKey(table: entity.table, number: entity.number)] ?? 0
    }

    /// An entity's rows in a table, for ``count(of:)``.
    private struct ObjectCountKey: Hashable {
        var table: String
        var number: Int
    }

    /// The rows of each entity in each table, once counted.
    private let objectCounts = Mutex<[ObjectCountKey: Int]?>(nil)

    /// The rows each entity's reads went through, whole (not stopped by an error), by entity number: what lets
    /// ``forEachUncarriedObject(_:)`` skip a table whose rows were all read already.
    private let rowsRead = Mutex<[Int: Int]>([:])

    /// Notes that a read went through all of an entity's rows.
    func noteRowsRead(_ count: Int, of entity: StoreSchema.Entity) {
        rowsRead.withLock { $0[entity.number] = count }
    }

    /// How many rows the reads so far went through in `table`, if every entity stored there was read whole.
    func rowsRead(inTable table: String) -> Int? {
        rowsRead.withLock { read in
            var total = 0
            for entity in schema.entities where entity.table == table {
                guard let count = read[entity.number] else { return nil }
                total += count
            }
            return total
        }
    }

    /// Whether the store has tables of Core Data's persistent history or CloudKit mirroring.
    public var ancillaryTables: [String] { schema.ancillaryTables }

    /// Streams the objects of one entity (with its sub-entities unless `includingSubentities` is false), or of every
    /// entity, in a consistent snapshot.
    /// - Parameters:
    ///   - entity: an entity name; `nil` for all.
    ///   - includingSubentities: whether a named entity's sub-entities' objects come too.
    ///   - properties: only these attributes and relationships are read (`nil`: all), for scans that need few.
    ///   - body: receives each object.
    public func forEachObject(
        entity name: String? = nil, includingSubentities: Bool = true, properties: Set<String>? = nil, _ body: (ManagedObject) throws -> Void
    ) throws {
        let selected: [StoreSchema.Entity]
        if let name {
            guard let entity = schema.entity(named: name) else {
                throw CoreDataError(
                    .unknownEntity, "no entity \(name) in the model; entities: \(schema.entities.map(\.description.name).joined(separator: ", "))")
            }
            selected = includingSubentities ? entity.hierarchyNumbers.compactMap { schema.entity(number: $0) } : [entity]
        } else {
            selected = schema.entities
        }
        let reader = ObjectReader(store: self)
        try connection.read { db in
            for entity in selected {
                try reader.read(entity, properties: properties, db: db, body)
            }
        }
    }

    /// The object-ID URI of an object.
    public func uri(entity: String, primaryKey: Int64) -> String {
        "x-coredata://\(metadata.uuid)/\(entity)/p\(primaryKey)"
    }
}
