import FerryBackend
import FerryCore
import FerryJSON
import FerryLocalStore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The first copy into an empty store drops the name and reference indexes and builds them at its end: the store must
/// behave exactly as with them, and never be left without them.
@Suite struct LocalStoreBulkLoadTests {
    static let zone = ZoneID(zoneName: "CarZone")

    private func store(_ scratch: Scratch, name: String = "local.ferry") throws -> LocalStore {
        let store = try LocalStore(path: scratch.file(name), create: true)
        let ticks = Ticks()
        store.clock = { ticks.next() }
        try store.createZone(Self.zone)
        return store
    }

    private func car(_ name: String, _ fields: RecordFields = ["name": .string("Beetle")]) -> Record {
        Record(recordType: "Car", recordName: "Car.\(name)", zoneID: Self.zone, fields: fields)
    }

    private func note(_ name: String, parent: String, action: Reference.Action = .deleteSelf) -> Record {
        Record(
            recordType: "Note", recordName: "Note.\(name)", zoneID: Self.zone,
            fields: ["car": .reference(Reference(recordName: "Car.\(parent)", zoneID: Self.zone, action: action))])
    }

    /// The store's indexes, by name, read with the sqlite3 shell.
    private func indexes(_ path: String) throws -> Set<String> {
        Set(try SQLiteShell.rows(path, "SELECT name FROM sqlite_master WHERE type = 'index'").compactMap { $0["name"]?.stringValue })
    }

    /// Every row of records (without times) and refs, to compare two stores.
    private func contents(_ path: String) throws -> [JSONObject] {
        try SQLiteShell.rows(
            path, "SELECT zone, name, type, tag, seq, deleted, hex(digest) AS digest, hex(body) AS body FROM records ORDER BY zone, name")
            + SQLiteShell.rows(path, "SELECT zone, target, source FROM refs ORDER BY zone, target, source")
    }

    @Test func aBulkLoadWritesWhatOrdinaryWritesWriteAndRestoresTheIndexes() throws {
        try #require(SQLiteShell.isAvailable, "the sqlite3 shell is needed (Scripts/test installs it)")
        let scratch = try Scratch()
        let operations = (0..<20).flatMap { index in
            [RecordOperation(.forceReplace, car("\(index)")), RecordOperation(.forceReplace, note("\(index)", parent: "\(index)"))]
        }
        let bulk = try store(scratch, name: "bulk.ferry")
        #expect(try bulk.beginBulkLoad())
        #expect(bulk.isBulkLoading)
        #expect(try !indexes(scratch.file("bulk.ferry")).contains("records_name"), "the name index is dropped while loading")
        let bulkOutcomes = try bulk.modify(operations)
        try bulk.endBulkLoad()
        #expect(!bulk.isBulkLoading)
        let plain = try store(scratch, name: "plain.ferry")
        let plainOutcomes = try plain.modify(operations)
        #expect(bulkOutcomes.map(\.errorCode) == plainOutcomes.map(\.errorCode))
        try bulk.close()
        try plain.close()
        #expect(try indexes(scratch.file("bulk.ferry")).isSuperset(of: ["records_name", "refs_target", "records_feed"]))
        #expect(try contents(scratch.file("bulk.ferry")) == contents(scratch.file("plain.ferry")))
        #expect(try SQLiteShell.rows(scratch.file("bulk.ferry"), "SELECT * FROM ferry_meta WHERE key = 'bulk_load'").isEmpty)
    }

    @Test func onlyAnEmptyStoreIsBulkLoaded() throws {
        let scratch = try Scratch()
        let store = try store(scratch)
        _ = try store.modify([RecordOperation(.create, car("1"))])
        #expect(try !store.beginBulkLoad())
        #expect(!store.isBulkLoading)
    }

    @Test func aNameWrittenTwiceEndsTheLoadAndIsAnUpdate() throws {
        let scratch = try Scratch()
        let store = try store(scratch)
        try store.beginBulkLoad()
        let first = try store.modify([RecordOperation(.forceReplace, car("1"))])
        #expect(store.isBulkLoading)
        let second = try store.modify([RecordOperation(.create, car("1"))])
        #expect(!store.isBulkLoading, "the set cannot answer for a name it holds: the index is back")
        #expect(second.first?.errorCode == .exists)
        let replaced = try store.modify([RecordOperation(.forceReplace, car("1", ["name": .string("Golf")]))])
        guard case .saved(let created)? = first.first, case .saved(let record)? = replaced.first else {
            Issue.record("expected saves: \(first) \(replaced)")
            return
        }
        #expect(record.system?.created == created.system?.created, "an update keeps the creation time")
        #expect(try store.lookup([car("1").id]).count == 1)
    }

    @Test func deletionsAndValidateReferencesDuringALoadBehaveAsWithoutIt() throws {
        let scratch = try Scratch()
        let store = try store(scratch)
        try store.beginBulkLoad()
        _ = try store.modify([RecordOperation(.forceReplace, car("1")), RecordOperation(.forceReplace, note("1", parent: "1"))])
        let missing = try store.modify([RecordOperation(.forceReplace, note("2", parent: "9", action: .validate))])
        #expect(missing.first?.errorCode == .validatingReferenceError)
        #expect(store.isBulkLoading, "a VALIDATE reference to a name never written is answered by the set")
        let present = try store.modify([RecordOperation(.forceReplace, note("3", parent: "1", action: .validate))])
        #expect(present.first?.errorCode == nil, "\(present)")
        let deleted = try store.modify([RecordOperation(.forceDelete, car("1"))])
        #expect(deleted.first?.errorCode == nil)
        #expect(!store.isBulkLoading)
        let left = try store.lookup([car("1").id, note("1", parent: "1").id, note("3", parent: "1").id])
        let carGone = left[car("1").id]?.isDeleted
        let ownedNoteGone = left[note("1", parent: "1").id]?.isDeleted
        let validatingNoteGone = left[note("3", parent: "1").id]?.isDeleted
        #expect(carGone == true)
        #expect(ownedNoteGone == true, "the DELETE_SELF note went with its car")
        #expect(validatingNoteGone == false, "a VALIDATE reference does not cascade")
    }

    @Test func anInterruptedLoadHasItsIndexesBuiltWhenTheStoreIsNextOpened() throws {
        try #require(SQLiteShell.isAvailable, "the sqlite3 shell is needed (Scripts/test installs it)")
        let scratch = try Scratch()
        let path = scratch.file("local.ferry")
        do {
            let store = try store(scratch)
            try store.beginBulkLoad()
            _ = try store.modify((0..<10).map { RecordOperation(.forceReplace, car("\($0)")) })
            // Closed without ending the load, as after kill -9.
            try store.close()
        }
        #expect(try !indexes(path).contains("records_name"))
        let readOnly = try LocalStore(path: path, readOnly: true)
        #expect(try readOnly.lookup([car("3").id]).count == 1, "a reader finds records without the index, only slower")
        try readOnly.close()
        let reopened = try LocalStore(path: path)
        #expect(!reopened.isBulkLoading)
        #expect(try indexes(path).isSuperset(of: ["records_name", "refs_target"]))
        #expect(try reopened.modify([RecordOperation(.create, car("3"))]).first?.errorCode == .exists)
    }

    /// A store as Ferry wrote them before format version 2 (indexes inside their tables, and a `refs_source` index).
    static let versionOneSchema = """
        PRAGMA journal_mode = WAL;
        CREATE TABLE ferry_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE zones(id INTEGER PRIMARY KEY, zone_name TEXT NOT NULL, owner_name TEXT NOT NULL,
            last_seq INTEGER NOT NULL DEFAULT 0, UNIQUE(zone_name, owner_name));
        CREATE TABLE records(id INTEGER PRIMARY KEY, zone INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            name TEXT NOT NULL, type TEXT NOT NULL, tag TEXT NOT NULL, seq INTEGER NOT NULL, created INTEGER NOT NULL,
            modified INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, digest BLOB, body BLOB, UNIQUE(zone, name));
        CREATE INDEX records_feed ON records(zone, seq);
        CREATE TABLE refs(zone INTEGER NOT NULL, target TEXT NOT NULL, source TEXT NOT NULL,
            PRIMARY KEY(zone, target, source)) WITHOUT ROWID;
        CREATE INDEX refs_source ON refs(zone, source);
        CREATE TABLE assets(sha256 BLOB PRIMARY KEY, size INTEGER NOT NULL, chunks INTEGER NOT NULL);
        CREATE TABLE asset_chunks(sha256 BLOB NOT NULL, n INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY(sha256, n)) WITHOUT ROWID;
        CREATE TABLE copy_journal(run TEXT PRIMARY KEY, done INTEGER NOT NULL, finished INTEGER NOT NULL, source TEXT NOT NULL);
        CREATE TABLE copy_deferred(run TEXT NOT NULL, seq INTEGER NOT NULL, record BLOB NOT NULL, PRIMARY KEY(run, seq)) WITHOUT ROWID;
        INSERT INTO ferry_meta VALUES ('format', 'ferry-local-store'), ('version', '1'), ('store_id', 'V1-STORE');
        INSERT INTO zones(id, zone_name, owner_name, last_seq) VALUES (1, '_defaultZone', '__defaultOwner__', 0);
        """

    @Test func aVersionOneStoreIsWrittenAsBeforeWithoutABulkLoad() throws {
        try #require(SQLiteShell.isAvailable, "the sqlite3 shell is needed (Scripts/test installs it)")
        let scratch = try Scratch()
        let path = scratch.file("v1.ferry")
        try SQLiteShell.execute(path, Self.versionOneSchema)
        let store = try LocalStore(path: path)
        #expect(store.storeID == "V1-STORE")
        try store.createZone(Self.zone)
        #expect(try !store.beginBulkLoad(), "version 1 keeps its indexes inside its tables")
        let written = try store.modify([RecordOperation(.create, car("1")), RecordOperation(.create, note("1", parent: "1"))])
        #expect(written.map(\.errorCode) == [nil, nil])
        #expect(try store.modify([RecordOperation(.create, car("1"))]).first?.errorCode == .exists)
        #expect(try store.modify([RecordOperation(.forceDelete, car("1"))]).first?.errorCode == nil)
        let left = try store.lookup([car("1").id, note("1", parent: "1").id])
        #expect(left.values.allSatisfy(\.isDeleted) && left.count == 2, "the DELETE_SELF note went with its car: \(left)")
        try store.close()
        #expect(try SQLiteShell.rows(path, "SELECT value FROM ferry_meta WHERE key = 'version'").first?["value"] == "1")
    }

    @Test func aFailedTransactionEndsTheLoad() throws {
        let scratch = try Scratch()
        let store = try store(scratch)
        try store.beginBulkLoad()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write { batch in
                _ = try batch.modify([RecordOperation(.forceReplace, car("1"))], atomic: false)
                throw Stop()
            }
        }
        #expect(!store.isBulkLoading, "the set held a name the rollback removed")
        #expect(try store.lookup([car("1").id]).isEmpty)
        #expect(try store.modify([RecordOperation(.create, car("1"))]).first?.errorCode == nil)
    }
}
