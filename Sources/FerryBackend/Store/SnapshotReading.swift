import FerryRecords

/// A backend that can be read as of one moment: a copy out of it sees every zone, record and asset as they were when
/// it began, whatever other writers do meanwhile.
public protocol SnapshotReading: RecordStore {
    /// A read-only view of the backend as it is now; every read of it sees the same state. Closing it ends the
    /// snapshot (not the backend).
    func snapshot() async throws -> any RecordStore
}
