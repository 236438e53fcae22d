import FerryRecords

/// A backend that can be read as of one moment: a copy out of it sees every zone, record and asset as they were when
/// it began, whatever other writers do meanwhile.
public protocol SnapshotReading: RecordStore {
    /// A read-only view of the backend as it is now; every read of it sees the same state. Closing it ends the
    /// snapshot (not the backend).
    func snapshot() async throws -> any RecordStore
}

extension RecordStore {
    /// Runs `body` with a view of the store as of one moment where it can take one (``SnapshotReading``), else with
    /// the store itself; the snapshot is closed afterwards, whether `body` returns or throws.
    public func withSnapshot<Result>(_ body: (any RecordStore) async throws -> Result) async throws -> Result {
        let snapshot = try await (self as? any SnapshotReading)?.snapshot()
        do {
            let result = try await body(snapshot ?? self)
            try await snapshot?.close()
            return result
        } catch {
            try? await snapshot?.close()
            throw error
        }
    }
}
