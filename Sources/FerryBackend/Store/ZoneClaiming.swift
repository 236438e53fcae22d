import FerryRecords

/// A backend where a copy claims the zones it writes, so that two copies into one zone take turns instead of
/// interleaving their writes; copies into different zones run side by side.
public protocol ZoneClaiming: RecordStore {
    /// Claims `zone` for this store's copy until the store is closed.
    ///
    /// When another copy holds it: with `wait`, calls `waiting` once with what it waits for, then waits; without,
    /// fails at once (an error of kind `temporary`, exit 75).
    func claimZone(_ zone: ZoneID, wait: Bool, waiting: @Sendable (String) -> Void) async throws
}
