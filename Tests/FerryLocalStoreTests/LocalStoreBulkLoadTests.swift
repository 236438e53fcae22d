import FerryCore
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
