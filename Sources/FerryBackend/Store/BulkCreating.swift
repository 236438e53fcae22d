import FerryRecords

/// A backend that writes new records faster in bulk than through ``RecordStore/modify(_:in:atomic:)``.
///
/// The copy engine hands it records it expects the target to lack (neither live nor deleted): those its lookup did
/// not find, and, in a zone that was empty when the copy began, those it has not looked up. A first copy is nearly all
/// of them. The outcomes are exactly those of `modify` with `.forceReplace` of each record in order, not atomic.
public protocol BulkCreating: RecordStore {
    /// Writes `records`, with the content each encodes to, if `zone` holds none of them.
    ///
    /// `contents[i]` is `RecordContent(records[i])` (without system fields), computed ahead by the caller.
    /// - Returns: the outcomes, or `nil` when the zone holds one of the records, live or deleted, or the backend
    ///   refused one of them (then nothing was written: the caller looks them up and writes them by `modify`, which
    ///   gives each record's outcome).
    func createAbsent(_ records: [Record], contents: [RecordContent], in zone: ZoneID) async throws -> [RecordOutcome]?

    /// Called before a copy writes anything; `true` when the backend took the chance to defer work to
    /// ``endBulkLoad()`` (secondary indexes of an empty store, built once at the end).
    func beginBulkLoad() async throws -> Bool
    /// Called when a copy has written everything (also after a copy that ``beginBulkLoad()`` found nothing to defer
    /// for, and by the next copy after one that was interrupted).
    func endBulkLoad() async throws
}
