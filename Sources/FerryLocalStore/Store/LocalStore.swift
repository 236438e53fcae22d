import FerryBackend
import FerryCore
import FerryRecords
import Foundation
import GRDB

/// Ferry's embedded sync backend: one SQLite file with CloudKit's semantics.
///
/// Zones hold records; every write gets a server-assigned change tag, created/modified times and a place in its
/// zone's change feed. Operations follow CloudKit Web Services' `records/modify` (create, update, forceUpdate,
/// replace, forceReplace, delete, forceDelete) with its outcomes (EXISTS, CONFLICT, NOT_FOUND, ZONE_NOT_FOUND,
/// VALIDATING_REFERENCE_ERROR, ATOMIC_ERROR). Deleting a record deletes, in its zone, the records that point at it
/// with DELETE_SELF. Deletions leave tombstones so a change feed reports them. Assets are stored once by content.
///
/// ```swift
/// let store = try LocalStore(path: "app.ferry", create: true)
/// try store.createZone(ZoneID(zoneName: "CarZone"))
/// let outcomes = try store.modify([RecordOperation(.create, car)], atomic: true)
/// let page = try store.changes(in: ZoneID(zoneName: "CarZone"), since: nil)
/// ```
public final class LocalStore: @unchecked Sendable {
    /// The store file.
    public let path: String
    /// The store's identity, fixed at creation.
    public let storeID: String
    let database: DatabaseQueue
    /// Milliseconds since 1970 for created/modified times (replaceable for tests).
    public var clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// The bulk load under way, if any (see ``beginBulkLoad()``); touched only inside write transactions.
    var bulkLoad: BulkLoad?
    /// The writer's lock (`nil` for a reader): one process writes a store at a time.
    private let writerLock: FileLock?
    /// How a reader tells that another process wrote the store since it was opened: the files' signatures for a
    /// store opened immutable (SQLite then ignores other writers), SQLite's data version otherwise.
    private let readerCheck: ReaderCheck?

    private enum ReaderCheck {
        case files(FileSnapshot)
        case dataVersion(Int)
    }

    static let format = "ferry-local-store"
    /// The format version new stores get; 1 (indexes inside their tables) is read and written too.
    static let version = 2

    /// Opens a store, creating it (atomically: a complete empty store or nothing) when `create` is set; `readOnly`
    /// for a store that is only a source.
    ///
    /// A writer holds the store's lock file (`<path>-lock`) until it is closed or freed, so a second writer, in this
    /// process or another, is refused at once rather than interleaving its changes with the first one's (a copy's
    /// bulk load and resume journal assume they are alone). Readers take no lock: they see committed transactions.
    /// - Throws: ``LocalStoreError``: `missing` (66), `not-a-store` (65), `unsupported-version` (65), `busy` (75, another
    ///   writer holds the lock), `cannot-create` (73, no lock file or store can be made there).
    public init(path: String, create: Bool = false, readOnly: Bool = false) throws {
        self.path = path
        writerLock = readOnly ? nil : try Self.lockForWriting(path)
        if !FileManager.default.fileExists(atPath: path) {
            guard create else {
                throw LocalStoreError(.missing, "\(path): no local store here; copy into it first (ferry copy SOURCE \(path))")
            }
            try Self.createEmpty(at: path)
        }
        // A source with no write-ahead log is opened immutable, so reading it creates no -wal or -shm beside it. It is
        // decided on the look at the files that later reads are compared with: a log that appears after it is a change.
        let snapshot = readOnly ? FileSnapshot(paths: [path, path + "-wal"]) : nil
        let immutable = snapshot.map { ($0.signatures[path + "-wal"] ?? nil) == nil } ?? false
        let files = immutable ? snapshot : nil
        database = try Self.open(immutable ? SQLiteURI.immutable(path) : path, readOnly: readOnly)
        storeID = try Self.checkFormat(database, path: path)
        if let files {
            readerCheck = .files(files)
        } else if readOnly {
            readerCheck = .dataVersion(try Self.dataVersion(database, path: path))
        } else {
            readerCheck = nil
        }
        if !readOnly { try finishInterruptedBulkLoad() }
    }

    /// SQLite's count of commits by other connections, as this connection sees it.
    private static func dataVersion(_ database: DatabaseQueue, path: String) throws -> Int {
        do {
            return try database.read { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
        } catch let error as DatabaseError {
            throw translate(error, path: path)
        }
    }

    /// The writer's lock of the store at `path`, taken before the store is created or opened.
    private static func lockForWriting(_ path: String) throws -> FileLock {
        let lockPath = path + "-lock"
        let lock: FileLock?
        do {
            lock = try FileLock.acquire(path: lockPath)
        } catch let error as CoreError {
            throw LocalStoreError(.cannotCreate, "\(path): cannot lock the store for writing (\(error.message))", cause: error)
        }
        guard let lock else {
            let holder = FileLock.holder(of: lockPath).map { "another ferry (process \($0))" } ?? "another ferry"
            throw LocalStoreError(.busy, "\(path): \(holder) is writing this store; run again when it has finished")
        }
        return lock
    }

    private static func configuration(readOnly: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.label = "ferry.local"
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        if !readOnly {
            configuration.prepareDatabase { db in
                // Per-transaction durability (WAL), and a page cache that holds the indexes a large copy searches.
                // Checkpoints every 64 MiB of log rather than 4 MB: fewer copies of hot pages during large copies (the
                // setting counts pages, which are 16 KiB in new stores and 4 KiB in older ones).
                let pageSize = max(try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096, 512)
                try db.execute(
                    sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = \((64 << 20) / pageSize)")
            }
        }
        return configuration
    }

    private static func open(_ path: String, readOnly: Bool) throws -> DatabaseQueue {
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: readOnly))
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return queue
        } catch let error as DatabaseError {
            throw Self.translate(error, path: path)
        }
    }

    /// A database error as a store error: a locked file is temporary, a refused write means contents Ferry did not
    /// expect, anything else means the file is not a store.
    static func translate(_ error: DatabaseError, path: String) -> LocalStoreError {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return LocalStoreError(.busy, "\(path): another process is writing the store; try again when it is done", cause: error)
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
            return LocalStoreError(.cannotCreate, "\(path): cannot write the store: \(error.message ?? "\(error.resultCode)")", cause: error)
        case .SQLITE_CONSTRAINT:
            return LocalStoreError(
                .damaged,
                "\(path): SQLite refused a write (\(error.message ?? "a constraint failed")); the store holds what Ferry did not expect: "
                    + "check it with `ferry verify \(path)`", cause: error)
        default:
            return LocalStoreError(
                .notAStore, "\(path): not a Ferry local store (SQLite says: \(error.message ?? "\(error.resultCode)"))", cause: error)
        }
    }

    private static func checkFormat(_ database: DatabaseQueue, path: String) throws -> String {
        do {
            let meta = try database.read { db -> [String: String] in
                guard try db.tableExists("ferry_meta") else { return [:] }
                return Dictionary(
                    try Row.fetchAll(db, sql: "SELECT key, value FROM ferry_meta").map { ($0[0] as String, $0[1] as String) },
                    uniquingKeysWith: { $1 })
            }
            guard meta["format"] == format, let id = meta["store_id"] else {
                throw LocalStoreError(.notAStore, "\(path): an SQLite database, but not a Ferry local store (no ferry_meta format row)")
            }
            guard let version = meta["version"].flatMap(Int.init), version <= Self.version else {
                throw LocalStoreError(
                    .unsupportedVersion,
                    "\(path): store format version \(meta["version"] ?? "?") is newer than this Ferry reads (\(Self.version)); update Ferry")
            }
            return id
        } catch let error as DatabaseError {
            throw translate(error, path: path)
        }
    }

    /// Writes an empty store to a temporary name beside `path`, then renames it into place.
    private static func createEmpty(at path: String) throws {
        let temporary = path + ".creating-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.removeItem(atPath: temporary)
        do {
            var configuration = configuration()
            configuration.journalMode = .default
            let queue = try DatabaseQueue(path: temporary, configuration: configuration)
            // 16 KiB pages rather than SQLite's 4 KiB: records average about 1 KB, and a copy writes each page to the
            // write-ahead log and again into the store, so a quarter of the pages is a quarter of the write calls (a
            // fresh copy of the standard large store: system time 1.8 → 1.1 s, wall about 8 % less; 64 KiB was slower).
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA page_size = 16384") }
            try queue.write { db in
                try db.execute(sql: LocalStoreSchema.sql)
                try db.execute(
                    sql: "INSERT INTO ferry_meta(key, value) VALUES ('format', ?), ('version', ?), ('store_id', ?)",
                    arguments: [format, String(version), UUID().text])
                try db.execute(
                    sql: "INSERT INTO zones(id, zone_name, owner_name, last_seq) VALUES (1, ?, ?, 0)",
                    arguments: [ZoneID.default.zoneName, ZoneID.default.ownerName])
            }
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            try queue.close()
            guard rename(temporary, path) == 0 else {
                throw LocalStoreError(.cannotCreate, "\(path): cannot create the store: \(String(cString: strerror(errno)))")
            }
        } catch let error as DatabaseError {
            try? FileManager.default.removeItem(atPath: temporary)
            throw LocalStoreError(.cannotCreate, "\(path): cannot create the store: \(error.message ?? "\(error.resultCode)")", cause: error)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    /// Closes the store (checkpointing its write-ahead log); the store must not be used afterwards.
    public func close() throws {
        defer { writerLock?.release() }
        do {
            try database.close()
        } catch let error as DatabaseError {
            throw Self.translate(error, path: path)
        }
    }

    /// Runs `body` in one write transaction: everything it does is committed together, or not at all.
    ///
    /// A transaction that fails during a bulk load ends the load (its set of written names would no longer match the
    /// store).
    public func write<Result>(_ body: (LocalStoreBatch) throws -> Result) throws -> Result {
        do {
            return try database.write { db in
                let batch = LocalStoreBatch(db: db, store: self, now: clock())
                let result = try body(batch)
                try batch.flush()
                return result
            }
        } catch {
            if bulkLoad != nil {
                bulkLoad = nil
                try? endBulkLoad()
            }
            if let error = error as? DatabaseError { throw Self.translate(error, path: path) }
            throw error
        }
    }

    /// Runs reads in one transaction (a consistent snapshot).
    ///
    /// A store opened as a source is read in many transactions (pages of the change feed, asset chunks): each one
    /// checks that no other process wrote the store since it was opened, so a source is read in one state or not at
    /// all.
    /// - Throws: ``LocalStoreError`` (`changedWhileRead` when another process wrote a source store).
    func read<Result>(_ body: (Database) throws -> Result) throws -> Result {
        let result: Result
        do {
            result = try database.read { db in
                let result = try body(db)
                if case .dataVersion(let opened) = readerCheck, try Int.fetchOne(db, sql: "PRAGMA data_version") != opened {
                    throw LocalStoreError(.changedWhileRead, changedMessage)
                }
                return result
            }
        } catch let error as DatabaseError {
            // What SQLite could not read in a file written meanwhile is explained by the writing.
            try checkFiles()
            throw Self.translate(error, path: path)
        } catch {
            try checkFiles()
            throw error
        }
        try checkFiles()
        return result
    }

    /// Throws when a source store opened immutable was written since.
    private func checkFiles() throws {
        guard case .files(let snapshot) = readerCheck, snapshot.changedFile() != nil else { return }
        throw LocalStoreError(.changedWhileRead, changedMessage)
    }

    private var changedMessage: String {
        "\(path): another process wrote the store while it was read as a source; run again when nothing writes it"
    }

    // MARK: Zones

    /// One zone, with its current sync token and number of live records.
    public struct ZoneInfo: Sendable, Hashable {
        public var zoneID: ZoneID
        public var syncToken: String
        public var recordCount: Int
    }

    /// Every zone, default zone first, then by name.
    public func zones() throws -> [ZoneInfo] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT z.id, z.zone_name, z.owner_name, z.last_seq,
                           (SELECT count(*) FROM records r WHERE r.zone = z.id AND r.deleted = 0) AS live
                    FROM zones z ORDER BY z.id = 1 DESC, z.zone_name, z.owner_name
                    """
            ).map { row in
                let zone = ZoneID(zoneName: row[1], ownerName: row[2])
                return ZoneInfo(zoneID: zone, syncToken: FeedPosition(zone: row[0], sequence: row[3]).text, recordCount: row[4])
            }
        }
    }

    /// Creates a zone; `false` when it already existed.
    @discardableResult
    public func createZone(_ zone: ZoneID) throws -> Bool {
        try write { batch in try batch.createZone(zone) }
    }

    /// Deletes a zone and everything in it.
    ///
    /// Returns `false` when there was none. The default zone cannot be deleted.
    @discardableResult
    public func deleteZone(_ zone: ZoneID) throws -> Bool {
        try write { batch in try batch.deleteZone(zone) }
    }

    // MARK: Records

    /// Applies operations in order, as CloudKit's `records/modify` does.
    ///
    /// With `atomic` (only in custom zones, as in CloudKit) one failure undoes the whole request: the failing
    /// operations keep their own error and the others fail with ATOMIC_ERROR. Without it each operation stands alone.
    public func modify(_ operations: [RecordOperation], atomic: Bool = false) throws -> [RecordOutcome] {
        try write { batch in try batch.modify(operations, atomic: atomic) }
    }

    /// The current state of records (live or tombstone), by ID; absent IDs were never written.
    public func lookup(_ ids: [RecordID]) throws -> [RecordID: StoredRecord] {
        try read { db in
            let batch = LocalStoreBatch(db: db, store: self, now: clock())
            var found: [RecordID: StoredRecord] = [:]
            for id in ids { if let state = try batch.lookup(id) { found[id] = state } }
            return found
        }
    }

    /// Calls `body` with every live record, zone by zone (default zone first), each zone in change order.
    public func forEachRecord(_ body: (Record) throws -> Void) throws {
        let zones = try self.zones()
        for zone in zones {
            var token: SyncToken? = nil
            var more = true
            while more {
                let page = try changes(in: zone.zoneID, since: token, limit: 2000)
                for change in page.changes { if case .record(let record) = change { try body(record) } }
                token = page.syncToken
                more = page.moreComing
            }
        }
    }
}

/// A record's current state in the store.
public struct StoredRecord: Sendable, Hashable {
    /// The record type.
    public var recordType: String
    /// The current change tag.
    public var changeTag: String
    /// Whether the record is deleted (a tombstone).
    public var isDeleted: Bool
    /// The SHA-256 of the record's canonical JSON without system fields (nil for tombstones).
    public var contentDigest: SHA256Digest?
    var created: Int64
    var modified: Int64
}

extension LocalStore {
    /// Runs `body` in a write transaction that is always rolled back: for dry runs that must count exactly.
    public func dryRun(_ body: (LocalStoreBatch) throws -> Void) throws {
        do {
            try database.inTransaction { db in
                let batch = LocalStoreBatch(db: db, store: self, now: clock())
                try body(batch)
                return .rollback
            }
        } catch let error as DatabaseError {
            throw Self.translate(error, path: path)
        }
    }
}

extension StoredRecord {
    /// The live record decoded from its stored body, with this state's change tag and times as system fields.
    /// - Throws: ``LocalStoreError`` `damaged` when the body is missing or does not decode.
    func record(body: [UInt8]?, id: RecordID, storePath: String) throws -> Record {
        guard let body, case .record(var record) = try? CloudKitJSONDecoder().decode(bytes: body) else {
            throw LocalStoreError(.damaged, "\(storePath): record \(id) in zone \(id.zoneID) does not decode; restore the store from a bundle")
        }
        record.system = SystemFields(changeTag: changeTag, created: RecordStamp(timestamp: created), modified: RecordStamp(timestamp: modified))
        return record
    }
}
