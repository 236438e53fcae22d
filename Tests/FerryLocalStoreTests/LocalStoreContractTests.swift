import FerryCore
import FerryLocalStore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The local store's CloudKit contract: operations and their outcomes, atomic batches, cascades, the change feed.
@Suite struct LocalStoreContractTests {
    static let zone = ZoneID(zoneName: "CarZone")

    private func store() throws -> (Scratch, LocalStore) {
        let scratch = try Scratch()
        let store = try LocalStore(path: scratch.file("local.ferry"), create: true)
        let ticks = Ticks()
        store.clock = { ticks.next() }
        try store.createZone(Self.zone)
        return (scratch, store)
    }

    private func car(_ name: String, _ fields: RecordFields = ["name": .string("Beetle")]) -> Record {
        Record(recordType: "Car", recordName: "Car.\(name)", zoneID: Self.zone, fields: fields)
    }

    private func saved(_ outcome: RecordOutcome?) throws -> Record {
        guard case .saved(let record)? = outcome else { throw LocalStoreTestFailure("expected saved, got \(String(describing: outcome))") }
        return record
    }

    @Test func createAssignsTagsAndTimesAndRefusesDuplicates() throws {
        let (_, store) = try store()
        let first = try saved(try store.modify([RecordOperation(.create, car("1"))]).first)
        #expect(first.system?.changeTag?.isEmpty == false)
        #expect(first.system?.created?.timestamp == first.system?.modified?.timestamp)
        let again = try store.modify([RecordOperation(.create, car("1"))])
        #expect(again.first?.errorCode == .exists)
        let missingZone = try store.modify([RecordOperation(.create, Record(recordType: "Car", recordName: "x", zoneID: ZoneID(zoneName: "Nope")))])
        #expect(missingZone.first?.errorCode == .zoneNotFound)
        #expect(try store.zones().map(\.zoneID) == [.default, Self.zone])
    }

    @Test func updatesAreTagCheckedAndMergeFields() throws {
        let (_, store) = try store()
        let first = try saved(try store.modify([RecordOperation(.create, car("1", ["name": .string("Beetle"), "doors": .int64(2)]))]).first)
        let tag = try #require(first.system?.changeTag)
        let noTag = try store.modify([RecordOperation(.update, car("1", ["doors": .int64(4)]), recordChangeTag: nil)])
        #expect(noTag.first?.errorCode == .badRequest)
        let stale = try store.modify([RecordOperation(.update, car("1", ["doors": .int64(4)]), recordChangeTag: "zz")])
        #expect(stale.first?.errorCode == .conflict)
        let updated = try saved(try store.modify([RecordOperation(.update, car("1", ["doors": .int64(4)]), recordChangeTag: tag)]).first)
        #expect(updated.fields["name"] == .string("Beetle") && updated.fields["doors"] == .int64(4), "update changes only listed fields")
        #expect(updated.system?.changeTag != tag)
        #expect(updated.system?.created == first.system?.created)
        #expect((updated.system?.modified?.timestamp ?? 0) > (first.system?.modified?.timestamp ?? 0))
        let replaced = try saved(
            try store.modify([RecordOperation(.replace, car("1", ["doors": .int64(5)]), recordChangeTag: updated.system?.changeTag)]).first)
        #expect(replaced.fields["name"] == nil, "replace removes unlisted fields")
        let forced = try saved(try store.modify([RecordOperation(.forceUpdate, car("2", ["doors": .int64(1)]))]).first)
        #expect(forced.fields["doors"] == .int64(1), "forceUpdate creates a missing record")
        #expect(try store.modify([RecordOperation(.update, car("3"), recordChangeTag: "1")]).first?.errorCode == .notFound)
    }

    @Test func deletesCascadeAlongDeleteSelfReferences() throws {
        let (_, store) = try store()
        let parent = car("1")
        let note = Record(
            recordType: "Note", recordName: "Note.1", zoneID: Self.zone,
            fields: ["car": .reference(Reference(recordName: parent.recordName, zoneID: Self.zone, action: .deleteSelf))])
        let grandchild = Record(
            recordType: "Mark", recordName: "Mark.1", zoneID: Self.zone,
            fields: ["note": .reference(Reference(recordName: note.recordName, zoneID: Self.zone, action: .deleteSelf))])
        let loose = Record(
            recordType: "Note", recordName: "Note.2", zoneID: Self.zone,
            fields: ["car": .reference(Reference(recordName: parent.recordName, zoneID: Self.zone, action: .none))])
        let outcomes = try store.modify([parent, note, grandchild, loose].map { RecordOperation(.create, $0) }, atomic: true)
        #expect(outcomes.allSatisfy { $0.errorCode == nil })
        let stale = try store.modify([RecordOperation(.delete, parent, recordChangeTag: "0")])
        #expect(stale.first?.errorCode == .conflict)
        #expect(try store.modify([RecordOperation(.forceDelete, parent)]).first == .deleted(parent.id))
        let states = try store.lookup([parent.id, note.id, grandchild.id, loose.id])
        #expect(states[parent.id]?.isDeleted == true && states[note.id]?.isDeleted == true && states[grandchild.id]?.isDeleted == true)
        #expect(states[loose.id]?.isDeleted == false, "NONE references do not cascade")
        #expect(try store.modify([RecordOperation(.forceDelete, parent)]).first?.errorCode == .notFound)
        // A deleted name can be created again.
        #expect(try store.modify([RecordOperation(.create, parent)]).first?.errorCode == nil)
    }

    @Test func cascadesFollowTheReferencesRecordsHoldNow() throws {
        let (_, store) = try store()
        let (first, second, third) = (car("1"), car("2"), car("3"))
        func note(_ name: String, pointingAt targets: [Record]) -> Record {
            var fields: RecordFields = ["text": .string(name)]
            for (index, target) in targets.enumerated() {
                fields["car\(index)"] = .reference(Reference(recordName: target.recordName, zoneID: Self.zone, action: .deleteSelf))
            }
            return Record(recordType: "Note", recordName: "Note.\(name)", zoneID: Self.zone, fields: fields)
        }
        _ = try store.modify([first, second, third].map { RecordOperation(.create, $0) })
        // A note moved from the first car to the second, one that lost its reference, one that was deleted and
        // created again without it, and one that points at the third car twice.
        _ = try store.modify(
            [note("moved", pointingAt: [first]), note("freed", pointingAt: [first]), note("reborn", pointingAt: [first])].map {
                RecordOperation(.create, $0)
            })
        _ = try store.modify([
            RecordOperation(.forceReplace, note("moved", pointingAt: [second])), RecordOperation(.forceReplace, note("freed", pointingAt: [])),
            RecordOperation(.forceDelete, note("reborn", pointingAt: [])), RecordOperation(.create, note("twice", pointingAt: [third, third])),
        ])
        _ = try store.modify([RecordOperation(.create, note("reborn", pointingAt: []))])
        #expect(try store.modify([RecordOperation(.forceDelete, first)]).first == .deleted(first.id))
        var states = try store.lookup(["moved", "freed", "reborn", "twice"].map { note($0, pointingAt: []).id })
        #expect(states.values.allSatisfy { !$0.isDeleted }, "the first car's notes point elsewhere or nowhere now")
        #expect(try store.modify([RecordOperation(.forceDelete, second)]).first == .deleted(second.id))
        states = try store.lookup([note("moved", pointingAt: []).id])
        #expect(states[note("moved", pointingAt: []).id]?.isDeleted == true, "the moved note follows its new parent")
        // Replacing the twice-pointing note with one reference to the third car keeps that reference.
        _ = try store.modify([RecordOperation(.forceReplace, note("twice", pointingAt: [third]))])
        #expect(try store.modify([RecordOperation(.forceDelete, third)]).first == .deleted(third.id))
        states = try store.lookup([note("twice", pointingAt: []).id, note("freed", pointingAt: []).id])
        #expect(states[note("twice", pointingAt: []).id]?.isDeleted == true)
        #expect(states[note("freed", pointingAt: []).id]?.isDeleted == false)
    }

    @Test func atomicBatchesAreAllOrNothing() throws {
        let (_, store) = try store()
        _ = try store.modify([RecordOperation(.create, car("1"))])
        let outcomes = try store.modify([RecordOperation(.create, car("2")), RecordOperation(.create, car("1"))], atomic: true)
        #expect(outcomes.map(\.errorCode) == [.atomicError, .exists])
        #expect(try store.lookup([car("2").id]).isEmpty, "nothing of a failed atomic batch stays")
        let loose = try store.modify([RecordOperation(.create, car("2")), RecordOperation(.create, car("1"))], atomic: false)
        #expect(loose.map(\.errorCode) == [nil, .exists])
        let defaultZone = try store.modify([RecordOperation(.create, Record(recordType: "Car", recordName: "d", zoneID: .default))], atomic: true)
        #expect(defaultZone.first?.errorCode == .badRequest)
        let twice = try store.modify([RecordOperation(.forceReplace, car("3")), RecordOperation(.forceReplace, car("3"))])
        #expect(twice.map(\.errorCode) == [nil, .badRequest])
    }

    @Test func validateReferencesNeedTheirTarget() throws {
        let (_, store) = try store()
        let note = Record(
            recordType: "Note", recordName: "Note.1", zoneID: Self.zone,
            fields: ["car": .reference(Reference(recordName: "Car.9", zoneID: Self.zone, action: .validate))])
        #expect(try store.modify([RecordOperation(.create, note)]).first?.errorCode == .validatingReferenceError)
        #expect(try store.modify([RecordOperation(.create, car("9")), RecordOperation(.create, note)]).map(\.errorCode) == [nil, nil])
        let crossing = Record(
            recordType: "Note", recordName: "Note.2", zoneID: Self.zone,
            fields: ["car": .reference(Reference(recordName: "Car.9", zoneID: ZoneID(zoneName: "Other"), action: .none))])
        #expect(try store.modify([RecordOperation(.create, crossing)]).first?.errorCode == .badRequest)
    }

    @Test func theChangeFeedPagesWithTokensAndTombstones() throws {
        let (_, store) = try store()
        _ = try store.modify((1...5).map { RecordOperation(.create, car("\($0)")) })
        let first = try store.changes(in: Self.zone, since: nil, limit: 3)
        #expect(first.changes.count == 3 && first.moreComing)
        let second = try store.changes(in: Self.zone, since: first.syncToken, limit: 3)
        #expect(second.changes.count == 2 && !second.moreComing)
        let quiet = try store.changes(in: Self.zone, since: second.syncToken)
        #expect(quiet.changes.isEmpty && quiet.syncToken == second.syncToken)
        _ = try store.modify([RecordOperation(.forceDelete, car("2")), RecordOperation(.forceReplace, car("4", ["name": .string("Mini")]))])
        let later = try store.changes(in: Self.zone, since: second.syncToken)
        #expect(later.changes.map(\.recordName) == ["Car.2", "Car.4"])
        if case .deletion = later.changes.first {} else { Issue.record("a deletion shows as a tombstone") }
        let full = try store.changes(in: Self.zone, since: nil)
        #expect(full.changes.count == 5, "each record once, in its latest state")
        #expect(throws: LocalStoreError.self) { try store.changes(in: .default, since: second.syncToken) }
        #expect(throws: LocalStoreError.self) { try store.changes(in: Self.zone, since: "garbage") }
    }

    @Test func deletingAZoneDeletesItsRecordsAndANewZoneOfTheNameStartsEmpty() throws {
        let (_, store) = try store()
        let other = ZoneID(zoneName: "TruckZone")
        // All in one batch: what the batch remembers of the zone must go with it.
        try store.write { batch throws in
            #expect(try batch.createZone(other))
            #expect(try batch.apply(RecordOperation(.create, car("1"))).errorCode == nil)
            let truck = Record(recordType: "Truck", recordName: "Truck.1", zoneID: other, fields: ["name": .string("Hauler")])
            #expect(try batch.apply(RecordOperation(.create, truck)).errorCode == nil)
            #expect(try batch.deleteZone(Self.zone))
            #expect(try batch.lookup(car("1").id) == nil)
            #expect(try batch.apply(RecordOperation(.create, car("2"))).errorCode == .zoneNotFound)
            #expect(try batch.createZone(Self.zone))
            #expect(try batch.apply(RecordOperation(.create, car("2"))).errorCode == nil)
            #expect(try batch.lookup(car("1").id) == nil)
            #expect(try batch.lookup(truck.id) != nil)
        }
        #expect(try store.lookup([car("1").id, car("2").id]).keys.map(\.recordName) == ["Car.2"])
        #expect(try store.deleteZone(.default) == false, "the default zone stays")
    }

    @Test func openingRefusesWhatIsNotAStore() throws {
        let scratch = try Scratch()
        try scratch.write("text.ferry", "hello")
        #expect(throws: LocalStoreError.self) { try LocalStore(path: scratch.file("text.ferry")) }
        #expect(throws: LocalStoreError.self) { try LocalStore(path: scratch.file("absent.ferry")) }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("absent.ferry")))
        let created = try LocalStore(path: scratch.file("new.ferry"), create: true)
        try created.close()
        let reopened = try LocalStore(path: scratch.file("new.ferry"))
        #expect(created.storeID == reopened.storeID)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains("creating") }.isEmpty)
    }

    @Test func oneWriterAtATimeWhileReadersRead() throws {
        let scratch = try Scratch()
        let path = scratch.file("shared.ferry")
        let writer = try LocalStore(path: path, create: true)
        // A second writer (another copy, in this process or another) is refused at once, naming the holder.
        #expect {
            _ = try LocalStore(path: path)
        } throws: { error in
            guard let error = error as? LocalStoreError else { return false }
            return error.code == .busy && error.kind == .temporary
                && error.message == "\(path): another ferry (process \(getpid())) is writing this store; run again when it has finished"
        }
        // Also before the store exists: two copies into a new store cannot both create it.
        let fresh = try LocalStore(path: scratch.file("fresh.ferry"), create: true)
        #expect(throws: LocalStoreError.self) { try LocalStore(path: scratch.file("fresh.ferry"), create: true) }
        try fresh.close()
        let reader = try LocalStore(path: path, readOnly: true)
        #expect(reader.storeID == writer.storeID)
        try writer.close()
        let next = try LocalStore(path: path)
        #expect(next.storeID == writer.storeID)
    }

    @Test func aSourceWrittenWhileItIsReadIsRefused() throws {
        let scratch = try Scratch()
        let path = scratch.file("source.ferry")
        do {
            let writer = try LocalStore(path: path, create: true)
            try writer.createZone(Self.zone)
            _ = try writer.modify([RecordOperation(.create, car("1"))])
            try writer.close()
        }
        let isChange = { (error: any Error) -> Bool in
            guard let error = error as? LocalStoreError else { return false }
            return error.code == .changedWhileRead && error.kind == .temporary
                && error.message == "\(path): another process wrote the store while it was read as a source; run again when nothing writes it"
        }
        // Opened without a write-ahead log: in place, immutable; the files tell.
        let inPlace = try LocalStore(path: path, readOnly: true)
        #expect(try inPlace.lookup([car("1").id]).count == 1)
        let writer = try LocalStore(path: path)
        _ = try writer.modify([RecordOperation(.create, car("2"))])
        #expect { try inPlace.lookup([car("1").id]) } throws: { isChange($0) }
        // Opened beside a writer (its log is there): SQLite's data version tells.
        let beside = try LocalStore(path: path, readOnly: true)
        #expect(try beside.lookup([car("2").id]).count == 1)
        _ = try writer.modify([RecordOperation(.create, car("3"))])
        #expect { try beside.lookup([car("1").id]) } throws: { isChange($0) }
        try writer.close()
    }

    @Test func assetsAreStoredOnceAndReadBack() throws {
        let (scratch, store) = try store()
        let bytes = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try scratch.write("photo.bin", Data(bytes))
        let provider = try DirectoryAssetProvider(root: scratch.path)
        let asset = try provider.resolve(path: "photo.bin", fileName: nil)
        let first = try store.write { batch in try batch.storeAsset(asset, from: provider) }
        let second = try store.write { batch in try batch.storeAsset(asset, from: provider) }
        #expect(first && !second)
        let reader = try LocalStoreAssets(store: store).open(asset)
        var back: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 100_000)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if count == 0 { break }
            back += buffer[..<count]
        }
        #expect(back == bytes)
        var wrong = asset
        wrong.size += 1
        // The directory refuses to open it; a source that hands over the bytes all the same is caught by the store.
        #expect(throws: RecordError.self) { try store.write { batch in try batch.storeAsset(wrong, from: provider) } }
        #expect(throws: LocalStoreError.self) { try store.write { batch in try batch.storeAsset(wrong, from: SizeBlindProvider(provider)) } }
    }

    @Test func forceReplaceWritesWhatTheOperationWritesAndReturnsOnlyFailures() throws {
        let (_, store) = try store()
        let (_, other) = try self.store()
        let record = car("1", ["name": .string("Beetle"), "doors": .int64(2)])
        let encoded = LocalStoreBatch.encode(record)
        #expect(try store.write { batch in try batch.forceReplace(record, encoded: encoded) } == nil)
        _ = try saved(try other.write { batch in try batch.apply(RecordOperation(.forceReplace, record), encoded: encoded) })
        let written = try #require(try store.lookup([record.id])[record.id])
        let applied = try #require(try other.lookup([record.id])[record.id])
        #expect(written == applied, "the same row, tag and times as a forceReplace operation")
        #expect(written.contentDigest == encoded.digest)
        let read = try store.write { batch in try batch.record(record.id) }
        #expect(try read == other.write { batch in try batch.record(record.id) })
        #expect(read?.fields == record.fields)

        let elsewhere = Record(recordType: "Car", recordName: "Car.2", zoneID: ZoneID(zoneName: "Nope"))
        let noZone = try store.write { batch in try batch.forceReplace(elsewhere, encoded: LocalStoreBatch.encode(elsewhere)) }
        #expect(noZone?.errorCode == .zoneNotFound)
        let dangling = car("3", ["owner": .reference(Reference(recordName: "Person.9", zoneID: Self.zone, action: .validate))])
        let refused = try store.write { batch in try batch.forceReplace(dangling, encoded: LocalStoreBatch.encode(dangling)) }
        #expect(refused?.errorCode == .validatingReferenceError)
        #expect(try store.lookup([dangling.id]).isEmpty, "a refused record is not written")
    }
}

/// A clock that moves one second per call.
final class Ticks: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Int64 = 1_700_000_000_000

    func next() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        now += 1000
        return now
    }
}

/// A failed expectation with a message.
struct LocalStoreTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Hands over an asset's file whatever size it is asked for, as a careless source might.
private final class SizeBlindProvider: AssetProvider {
    let base: DirectoryAssetProvider

    init(_ base: DirectoryAssetProvider) { self.base = base }

    func canProvide(_ asset: Asset) -> Bool { true }

    func open(_ asset: Asset) throws -> any AssetReading {
        let size = try FileManager.default.attributesOfItem(atPath: "\(base.root)/photo.bin")[.size] as? Int ?? 0
        return try base.open(Asset(sha256: asset.sha256, size: Int64(size)))
    }
}
