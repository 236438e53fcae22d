import FerryBackend
import FerryCore
import FerryLocalStore
import FerryRecords
import FerryTesting
import Foundation
import Testing

import class GRDB.DatabaseQueue

/// What the local store adds to the backend contract (whose conformance suite it passes): one writer, sources read in
/// one state, batches, the copy's fast write path.
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

    /// A stored body that is no record is reported with its record by the feed, read as records or as lines (whose
    /// reader decodes them: a body that is an object is handed on as a line, and refused there).
    @Test func aDamagedBodyIsReportedWithItsRecordEitherWay() throws {
        let (scratch, store) = try store()
        try store.write { batch throws in
            for name in ["1", "2"] { #expect(try batch.apply(RecordOperation(.create, car(name))).errorCode == nil) }
        }
        let queue = try DatabaseQueue(path: scratch.file("local.ferry"))
        for (body, linesRefused) in [("not json", true), ("{\"fields\":{\"n\":{\"type\":\"NOPE\",\"value\":1}}}", false)] {
            try queue.write { db in try db.execute(sql: "UPDATE records SET body = ? WHERE name = 'Car.2'", arguments: [Data(body.utf8)]) }
            #expect {
                _ = try store.changes(in: Self.zone, since: nil, limit: 10)
            } throws: { error in
                (error as? LocalStoreError)?.code == .damaged && "\(error)".contains("Car.2")
            }
            if linesRefused {
                #expect {
                    _ = try store.changeLines(in: Self.zone, since: nil, limit: 10)
                } throws: { error in
                    (error as? LocalStoreError)?.code == .damaged && "\(error)".contains("Car.2")
                }
            } else {
                let page = try store.changeLines(in: Self.zone, since: nil, limit: 10)
                guard case .line(let first)? = page.entries.first, page.entries.count == 2 else {
                    Issue.record("two lines: \(page.entries)")
                    continue
                }
                #expect(throws: Never.self) { try CloudKitJSONDecoder().decode(bytes: Array(page.bytes[..<first])) }
                #expect(throws: RecordError.self) { try CloudKitJSONDecoder().decode(bytes: Array(page.bytes[first...])) }
            }
        }
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
            let count = try buffer.withUnsafeMutableBytes { try reader.readBytes(into: $0) }
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
        let encoded = RecordContent(record)
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
        let noZone = try store.write { batch in try batch.forceReplace(elsewhere, encoded: RecordContent(elsewhere)) }
        #expect(noZone?.errorCode == .zoneNotFound)
        let dangling = car("3", ["owner": .reference(Reference(recordName: "Person.9", zoneID: Self.zone, action: .validate))])
        let refused = try store.write { batch in try batch.forceReplace(dangling, encoded: RecordContent(dangling)) }
        #expect(refused?.errorCode == .validatingReferenceError)
        #expect(try store.lookup([dangling.id]).isEmpty, "a refused record is not written")
    }

    /// Two uploads of one asset interleaved chunk by chunk: the first to finish stores it, the other finds it stored,
    /// and chunks a damaged, longer upload left behind do not outlive the good one.
    @Test func uploadsOfOneAssetSideBySideStoreItOnce() async throws {
        let (scratch, store) = try self.store()
        defer { withExtendedLifetime(scratch) {} }
        let bytes = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }
        let asset = Asset(sha256: SHA256Hasher.digest(bytes), size: Int64(bytes.count))
        let damaged = try AssetUpload(store: store, digest: asset.sha256)
        try (bytes + bytes).withUnsafeBytes { try damaged.append($0) }
        #expect(throws: LocalStoreError.self) { try damaged.finish() }
        let first = try AssetUpload(store: store, digest: asset.sha256)
        let second = try AssetUpload(store: store, digest: asset.sha256)
        try bytes.withUnsafeBytes { all in
            try first.append(UnsafeRawBufferPointer(rebasing: all[..<((1 << 20) + 5)]))
            try second.append(all)
            try first.append(UnsafeRawBufferPointer(rebasing: all[((1 << 20) + 5)...]))
        }
        #expect(try second.finish() == true)
        #expect(try first.finish() == false, "the other upload stored it first")
        #expect(try store.assetChunkCount() == 4, "the damaged upload's chunks past the end are gone")
        #expect(try await LocalRecordStore(store).assetBytes(asset).collected() == bytes)
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
