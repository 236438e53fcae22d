import FerryRecords

/// A backend that can read its change feed as lines of CloudKit record JSON, so that a writer of lines (a bundle) takes
/// its records without their being decoded and encoded again.
public protocol LineReading: RecordStore {
    /// A page of a zone's change feed, as ``RecordStore/changes(in:since:limit:)`` gives it (the same changes, order,
    /// token and `moreComing`), with each record a line that decodes to the record `changes` gives: a record
    /// dictionary with its system fields and zone, in any key order and spacing.
    func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> LinePage
}
