import FerryCore
import FerryRecords

/// An asset's bytes in pieces, pulled by the consumer (so a slow target slows the reading, and memory stays bounded).
public typealias AssetBytes = AsyncThrowingStream<[UInt8], any Error>

/// A sync backend, as the transfer engine and the everyday verbs see it: zones of records with CloudKit's semantics,
/// content-addressed assets and a change feed.
///
/// Every call is a batch (one request for a network backend). Records are written by ``modify(_:in:atomic:)`` with
/// CloudKit Web Services' operations and per-record outcomes; failures of a whole request throw (``BackendError`` or
/// the backend module's own error). ``InMemoryRecordStore`` is the reference: it documents the semantics in code and
/// every backend passes the same conformance suite.
public protocol RecordStore: Sendable {
    /// The backend's name for messages (`app.ferry`, `postgres://host/db`); never holds a secret.
    var name: String { get }
    /// What the backend can do and the limits of its requests.
    var capabilities: BackendCapabilities { get }

    /// Every zone, the default zone first, then by name.
    func zones() async throws -> [ZoneSummary]
    /// Every zone with the token of its latest change, in ``zones()``'s order: what ``zones()`` tells without counting
    /// the records (a count may read every record of the zone).
    func zoneTokens() async throws -> [ZoneToken]
    /// Every zone, each with whether it holds a live record: what ``zones()`` tells, without counting the records.
    func zoneOccupancy() async throws -> [ZoneID: Bool]
    /// Creates a zone; `false` when it already existed.
    func createZone(_ zone: ZoneID) async throws -> Bool
    /// Deletes a zone with everything in it; `false` when there was none. The default zone cannot be deleted.
    func deleteZone(_ zone: ZoneID) async throws -> Bool

    /// The versions of the records named (tombstones too, where ``BackendCapabilities/reportsTombstones``); names the
    /// backend does not hold are left out.
    func lookup(_ ids: [RecordID]) async throws -> [RecordID: RecordVersion]
    /// The live records named, with their system fields; deleted and unknown names are left out.
    func fetch(_ ids: [RecordID]) async throws -> [RecordID: Record]
    /// Applies operations on records of one zone, in order, with one outcome each, in order.
    ///
    /// With `atomic` (custom zones of backends with ``BackendCapabilities/atomicZones``), one failure undoes them all:
    /// the failing operations keep their own code and the others fail with ATOMIC_ERROR. An operation on a record of
    /// another zone fails with BAD_REQUEST.
    func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool) async throws -> [RecordOutcome]

    /// The assets of those named that the backend does not hold (by SHA-256 and size).
    func missingAssets(_ assets: [Asset]) async throws -> [Asset]
    /// Stores an asset from its bytes, checking that they hash to its digest; `false` when it was already stored.
    func putAsset(_ asset: Asset, bytes: AssetBytes) async throws -> Bool
    /// An asset's bytes, streamed.
    /// - Throws: ``BackendError`` `asset-not-found` when the backend does not hold it.
    func assetBytes(_ asset: Asset) async throws -> AssetBytes

    /// The changes in a zone since a token (from the start without one), at most `limit`: each changed record once in
    /// its latest state, deletions as tombstones, with the token to ask from next and whether more follow.
    func changes(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> ChangePage
    /// What tells this backend's feed from another's (a store's own identifier), so that a position read from one is
    /// not taken for a position in another whose zones have the same numbers; `nil` when it has none.
    func feedIdentity() async throws -> String?

    /// Ends the connection; the store must not be used afterwards.
    func close() async throws
}

extension RecordStore {
    public func close() async throws {}

    public func feedIdentity() async throws -> String? { nil }

    public func zoneTokens() async throws -> [ZoneToken] {
        try await zones().map { ZoneToken(zoneID: $0.zoneID, syncToken: $0.syncToken) }
    }

    public func zoneOccupancy() async throws -> [ZoneID: Bool] {
        Dictionary(try await zones().map { ($0.zoneID, $0.recordCount > 0) }, uniquingKeysWith: { $0 || $1 })
    }
}

/// How far a copy run got in a target, so the same copy resumes after an interruption.
public struct CopyCheckpoint: Sendable, Hashable, Codable {
    /// Changes of the source already applied, in the source's order.
    public var done: Int64
    /// Whether the copy ran to its end.
    public var finished: Bool

    /// Creates a checkpoint.
    public init(done: Int64, finished: Bool) {
        self.done = done
        self.finished = finished
    }
}

/// Where a copy keeps its checkpoints and the records it wrote without their VALIDATE references (to write whole at
/// its end), keyed by the run (a digest of the source and mapping).
///
/// A backend that can hold it in its own transactions does (the local store commits the checkpoint with the batch it
/// counts); others keep it in a local file beside the run's state (``FileCheckpointJournal``), written after each
/// batch commits, so a resumed copy may send the last batch again, which copies make harmless (unchanged records are
/// skipped, deletions of absent records are `absent`).
public protocol CheckpointJournal: Sendable {
    /// The checkpoint a run recorded, if any.
    func checkpoint(run: String) async throws -> CopyCheckpoint?
    /// Records how far a run got.
    func setCheckpoint(run: String, source: String, _ checkpoint: CopyCheckpoint) async throws
    /// Remembers a record to write again, whole, at the end of the run.
    func deferRecord(_ record: Record, run: String) async throws
    /// The records a run deferred, in order; they are removed from the journal.
    func takeDeferred(run: String) async throws -> [Record]
}

extension AssetBytes {
    /// The bytes of a whole buffer, in pieces of at most `chunkSize`.
    public static func buffer(_ bytes: [UInt8], chunkSize: Int = 1 << 20) -> AssetBytes {
        AsyncThrowingStream { continuation in
            var start = 0
            while start < bytes.count {
                let end = Swift.min(start + chunkSize, bytes.count)
                continuation.yield(Array(bytes[start..<end]))
                start = end
            }
            continuation.finish()
        }
    }

    /// Every piece, joined (for tests and small assets: it holds the whole asset in memory).
    public func collected() async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await piece in self { bytes += piece }
        return bytes
    }
}

extension AssetBytes {
    /// The bytes an ``AssetReading`` gives, pulled a piece at a time; the reader is finished (and so checked) at the end.
    public static func reading(_ reader: consuming any AssetReading, chunkSize: Int = 1 << 20) -> AssetBytes {
        let box = ReaderBox(reader)
        return AsyncThrowingStream(unfolding: { try box.next(chunkSize) })
    }
}

/// Holds a synchronous reader for a pull-based stream.
///
/// `@unchecked Sendable`: the stream's unfolding closure is called by its one consumer, one call at a time, so the
/// reader is never touched concurrently; the type system cannot see that ordering.
private final class ReaderBox: @unchecked Sendable {
    private let reader: any AssetReading
    private var done = false

    init(_ reader: any AssetReading) { self.reader = reader }

    func next(_ chunkSize: Int) throws -> [UInt8]? {
        guard !done else { return nil }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        let filled = try buffer.withUnsafeMutableBytes { try reader.read(filling: $0) }
        if filled < chunkSize {
            done = true
            try reader.finish()
            if filled == 0 { return nil }
            buffer.removeLast(chunkSize - filled)
        }
        return buffer
    }
}
