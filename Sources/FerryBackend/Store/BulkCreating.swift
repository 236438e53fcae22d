import FerryRecords

/// A backend that writes new records faster in bulk than through ``RecordStore/modify(_:in:atomic:)``.
///
/// The copy engine hands it records it expects the target to lack (neither live nor deleted): those its lookup did
/// not find, and, in a zone that was empty when the copy began, those it has not looked up. A first copy is nearly all
/// of them. The outcomes are exactly those of `modify` with `.forceReplace` of each record in order, not atomic.
///
/// A bulk write comes in two steps, so that a copy can prepare the next one while the backend is busy with the last:
/// ``prepareCreation(_:contents:in:)`` does what needs no turn (checks of the records alone, their layout), and
/// ``createAbsent(_:)`` writes, in the order the caller calls it.
public protocol BulkCreating: RecordStore {
    /// Prepares a bulk write of `records` into `zone`, with the content each encodes to, without writing anything.
    ///
    /// `contents[i]` is `RecordContent(records[i])` (without system fields), computed ahead by the caller. The
    /// preparation must not depend on what the zone holds: writes sent before it may still be under way.
    func prepareCreation(_ records: [Record], contents: [RecordContent], in zone: ZoneID) async throws -> BulkCreation

    /// Writes a prepared bulk write if its zone holds none of its records.
    ///
    /// - Returns: the outcomes, or `nil` when the zone holds one of the records, live or deleted, or the backend
    ///   refused one of them (then nothing was written: the caller looks them up and writes them by `modify`, which
    ///   gives each record's outcome).
    func createAbsent(_ creation: BulkCreation) async throws -> [RecordOutcome]?

    /// Called before a copy writes anything; `true` when the backend took the chance to defer work to
    /// ``endBulkLoad()`` (the local store: the secondary indexes of an empty store, built once at the end). A backend
    /// may also defer work as the copy goes (PostgreSQL: a zone's secondary indexes, at its first bulk write).
    func beginBulkLoad() async throws -> Bool
    /// Called when a copy has written everything (also after a copy that ``beginBulkLoad()`` found nothing to defer
    /// for, and by the next copy after one that was interrupted).
    func endBulkLoad() async throws
}

extension BulkCreating {
    /// Prepares and writes `records` at once (``prepareCreation(_:contents:in:)``, then ``createAbsent(_:)``).
    public func createAbsent(_ records: [Record], contents: [RecordContent], in zone: ZoneID) async throws -> [RecordOutcome]? {
        try await createAbsent(try await prepareCreation(records, contents: contents, in: zone))
    }
}

/// A bulk write prepared ahead of its turn: the records, their contents, and what the backend made of them.
public struct BulkCreation: Sendable {
    /// The records to write, in order.
    public let records: [Record]
    /// What each record encodes to.
    public let contents: [RecordContent]
    /// The zone they go to.
    public let zone: ZoneID
    /// The backend's own preparation (checks, layout), opaque to the caller.
    package let prepared: (any Sendable)?

    /// A bulk write of `records` into `zone`, with the backend's preparation.
    package init(records: [Record], contents: [RecordContent], zone: ZoneID, prepared: (any Sendable)?) {
        self.records = records
        self.contents = contents
        self.zone = zone
        self.prepared = prepared
    }
}

/// A bulk-creating backend that is also a copy's checkpoint journal, and records a round's checkpoint in the
/// transaction of the round's bulk write: one commit for both, and never one without the other.
public protocol CheckpointedBulkCreating: BulkCreating, CheckpointJournal {
    /// Writes a prepared bulk write like ``BulkCreating/createAbsent(_:)`` and, when every record was saved, records
    /// `checkpoint` of `run` (as ``CheckpointJournal/setCheckpoint(run:source:_:)`` would) in the same transaction.
    ///
    /// A copy needs to know which records were refused, not each saved record back (with its new change tag and
    /// times), which would be made for every record of every round: the refusals alone are returned.
    ///
    /// - Returns: each record's outcome if it was refused, `nil` if it was saved as ``BulkCreating/createAbsent(_:)``
    ///   saves it (`nil` altogether as for that method, with nothing written), and whether the checkpoint was
    ///   recorded: not when a record was refused, so that the caller records it after what it does about that record.
    func createAbsent(_ creation: BulkCreation, recording checkpoint: CopyCheckpoint, run: String, source: String) async throws
        -> (refusals: [RecordOutcome?], recorded: Bool)?
}
