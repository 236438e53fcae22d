import FerryCore
import FerryMemory
import FerryRecords
import GRDB

/// The state of a bulk load: which records it has written, as 64-bit hashes of zone number and name.
///
/// While the store's name index is dropped, this set is how the store answers "is there a record with this name?": a
/// name whose hash it does not hold is not in the store (which was empty when the load began and has had only the
/// load's writes since). A hash it holds may, very rarely, be another name's: the store then ends the load and asks its
/// index, so the answer is always exact. About 12 bytes per record.
final class BulkLoad {
    /// In 256 shards, which grow one at a time (one set would hold its old and new storage while it doubles).
    private var written = [Set<Int>](repeating: [], count: 256)

    /// Whether the load may have written a record with this name in this zone (`false`: it certainly did not).
    func mayContain(zone: Int64, name: String) -> Bool {
        let hash = Self.hash(zone: zone, name: name)
        return written[hash & 0xFF].contains(hash)
    }

    /// Notes a record written.
    func insert(zone: Int64, name: String) {
        let hash = Self.hash(zone: zone, name: name)
        written[hash & 0xFF].insert(hash)
    }

    private static func hash(zone: Int64, name: String) -> Int {
        var hasher = Hasher()
        hasher.combine(zone)
        hasher.combine(name)
        return hasher.finalize()
    }
}

/// Bulk loading: the first copy into an empty store appends its rows without the two random-order indexes and builds
/// them once at its end.
///
/// Every record a copy writes inserts a random record name into `records_name` and its DELETE_SELF targets into
/// `refs_target`; in transactions of thousands of records that dirties most of both indexes' pages each time, and the
/// write-ahead log carries them again and again (several times the store's size, Docs/design-notes.md). Sorting once at
/// the end writes each index page once.
///
/// While the indexes are dropped, the store answers lookups from the ``BulkLoad`` set; anything the set cannot answer
/// (a name written twice, a VALIDATE reference to a record written, a deletion, a zone deleted) ends the load first,
/// inside the same transaction. A failed
/// transaction ends it too, and a store that was interrupted (`kill -9`) in the middle of one has its indexes built
/// when it is next opened for writing, so every other operation always finds them.
extension LocalStore {
    /// Starts a bulk load when the store is a version 2 store that holds no records; otherwise does nothing.
    /// - Returns: whether a bulk load started.
    @discardableResult
    public func beginBulkLoad() throws -> Bool {
        guard bulkLoad == nil else { return true }
        let started = try write { batch -> Bool in
            let db = batch.db
            let hasIndexes = try LocalStoreSchema.bulkIndexes.allSatisfy { index in
                try Bool.fetchOne(db, sql: "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [index.name]) ?? false
            }
            guard hasIndexes, try Bool.fetchOne(db, sql: "SELECT 1 FROM records LIMIT 1") == nil else { return false }
            for index in LocalStoreSchema.bulkIndexes { try db.execute(sql: "DROP INDEX \(index.name)") }
            try db.execute(
                sql: "INSERT OR REPLACE INTO ferry_meta(key, value) VALUES (?, '1')", arguments: [LocalStoreSchema.bulkLoadKey])
            return true
        }
        if started { bulkLoad = BulkLoad() }
        return started
    }

    /// Whether a bulk load is under way in this process.
    public var isBulkLoading: Bool { bulkLoad != nil }

    /// Ends a bulk load: builds the indexes it dropped, in their own transaction.
    ///
    /// Does nothing when no bulk load is under way.
    public func endBulkLoad() throws {
        try write { batch in try batch.endBulkLoad() }
    }

    /// Builds the indexes of a store whose bulk load was interrupted (called when it is opened for writing).
    func finishInterruptedBulkLoad() throws {
        if try read(LocalStoreSchema.hasBulkLoadMarker) { try endBulkLoad() }
    }
}

extension LocalStoreBatch {
    /// Ends the store's bulk load inside this transaction, if one is under way: builds the indexes (with a smaller
    /// page cache, so that SQLite's sorters stay within Ferry's memory budget) and removes the marker.
    func endBulkLoad() throws {
        store.bulkLoad = nil
        guard try LocalStoreSchema.hasBulkLoadMarker(db) else { return }
        let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -65536
        // Two sorter threads halve the time of the sort (the table scan stays on this thread); each sorts runs of up to
        // the cache size, which is lowered for that, and the memory the copy freed goes back to the system first.
        try db.execute(sql: "PRAGMA cache_size = -8192; PRAGMA threads = 2")
        ProcessMemory.returnFreedMemory()
        defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize); PRAGMA threads = 0") }
        for index in LocalStoreSchema.bulkIndexes { try db.execute(sql: index.sql) }
        try db.execute(sql: "DELETE FROM ferry_meta WHERE key = ?", arguments: [LocalStoreSchema.bulkLoadKey])
        resetCachedState()
    }
}
