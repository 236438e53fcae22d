import FerryBackend
import FerryCore
import FerryRecords
import Foundation
import GRDB

/// The local store as a ``RecordStore``: the backend contract over one SQLite file, and the journal of copies into it.
///
/// Calls run on the caller's task and do their SQLite work there (a local file answers in microseconds, and a copy
/// makes one call per batch). A copy into a local store may bypass this adapter for the store's bulk path
/// (``LocalStore/write(_:)`` with whole source batches); both give the same records.
public final class LocalRecordStore: RecordStore, CheckpointJournal {
    /// The store.
    public let store: LocalStore

    /// Wraps an open store.
    public init(_ store: LocalStore) { self.store = store }

    public var name: String { store.path }

    public var capabilities: BackendCapabilities {
        BackendCapabilities(
            atomicZones: true, changeFeed: true, reportsTombstones: true, maxOperationsPerRequest: 10_000, maxRequestBytes: 16 << 20)
    }

    public func zones() async throws -> [ZoneSummary] {
        try store.zones().map { ZoneSummary(zoneID: $0.zoneID, syncToken: SyncToken($0.syncToken), recordCount: $0.recordCount) }
    }

    public func createZone(_ zone: ZoneID) async throws -> Bool { try store.createZone(zone) }

    public func deleteZone(_ zone: ZoneID) async throws -> Bool { try store.deleteZone(zone) }

    public func lookup(_ ids: [RecordID]) async throws -> [RecordID: RecordVersion] {
        try store.lookup(ids).mapValues { state in
            RecordVersion(recordType: state.recordType, changeTag: state.changeTag, isDeleted: state.isDeleted, contentDigest: state.contentDigest)
        }
    }

    public func fetch(_ ids: [RecordID]) async throws -> [RecordID: Record] { try store.records(ids) }

    public func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool) async throws -> [RecordOutcome] {
        let outside = operations.map { $0.record.zoneID != zone }
        guard outside.contains(true) else { return try store.modify(operations, atomic: atomic) }
        // Operations on another zone's records fail alone; with `atomic`, they fail the whole request.
        let inside = zip(operations, outside).filter { !$0.1 }.map(\.0)
        var applied = atomic ? [] : try store.modify(inside, atomic: false)[...]
        return zip(operations, outside).map { operation, isOutside in
            if isOutside {
                return .failed(
                    operation.record.id, .badRequest, reason: "the record is in zone \(operation.record.zoneID), the request in \(zone)")
            }
            if atomic { return .failed(operation.record.id, .atomicError, reason: "another operation of the atomic batch failed") }
            return applied.popFirst() ?? .failed(operation.record.id, .internalError, reason: "no outcome")
        }
    }

    public func missingAssets(_ assets: [Asset]) async throws -> [Asset] {
        try store.read { db in
            try assets.filter { asset in
                try Int64.fetchOne(db.cachedStatement(sql: "SELECT size FROM assets WHERE sha256 = ?"), arguments: [Data(asset.sha256.bytes)])
                    != asset.size
            }
        }
    }

    public func putAsset(_ asset: Asset, bytes: AssetBytes) async throws -> Bool {
        guard try await missingAssets([asset]).isEmpty == false else { return false }
        let upload = try AssetUpload(store: store, digest: asset.sha256)
        var size: Int64 = 0
        for try await piece in bytes {
            size += Int64(piece.count)
            try piece.withUnsafeBytes { try upload.append($0) }
        }
        guard size == asset.size else {
            throw LocalStoreError(.damaged, "asset \(asset.sha256): \(size) bytes received, \(asset.size) expected; the source is damaged")
        }
        return try upload.finish()
    }

    public func assetBytes(_ asset: Asset) async throws -> AssetBytes {
        guard try await missingAssets([asset]).isEmpty else {
            throw LocalStoreError(.missing, "\(store.path): no asset \(asset.sha256) (\(asset.size) bytes)")
        }
        return .reading(LocalAssetReader(store: store, asset: asset))
    }

    /// The store's own identifier, made when it was created.
    public func feedIdentity() async throws -> String? { store.storeID }

    public func changes(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> ChangePage {
        try store.changes(in: zone, since: token, limit: limit)
    }

    public func close() async throws { try store.close() }

    // MARK: Journal

    public func checkpoint(run: String) async throws -> CopyCheckpoint? {
        try store.write { batch in try batch.checkpoint(run: run) }
    }

    public func setCheckpoint(run: String, source: String, _ checkpoint: CopyCheckpoint) async throws {
        try store.write { batch in try batch.setCheckpoint(run: run, source: source, checkpoint) }
    }

    public func deferRecord(_ record: Record, run: String) async throws {
        try store.write { batch in try batch.deferRecord(record, run: run) }
    }

    public func takeDeferred(run: String) async throws -> [Record] {
        try store.write { batch in try batch.takeDeferred(run: run) }
    }
}

extension LocalStore {
    /// The live records named, with their system fields; deleted and unknown names are left out.
    public func records(_ ids: [RecordID]) throws -> [RecordID: Record] {
        try read { db in
            let batch = LocalStoreBatch(db: db, store: self, now: clock())
            var found: [RecordID: Record] = [:]
            for id in ids { if let record = try batch.record(id) { found[id] = record } }
            return found
        }
    }
}

extension LocalRecordStore: LineReading {
    /// The change feed's page with each record's stored body as its line (``LocalStore/changeLines(in:since:limit:)``).
    public func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> LinePage {
        try store.changeLines(in: zone, since: token, limit: limit)
    }
}
