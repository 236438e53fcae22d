import FerryBackend
import FerryRecords
import Logging
import PostgresNIO

extension PostgresRecordStore: ZoneClaiming {
    /// Claims a zone with a session-level advisory lock on a connection of the store's own, held until it is closed.
    ///
    /// The server releases the lock when that connection ends, also when the process is killed.
    public func claimZone(_ zone: ZoneID, wait: Bool, waiting: @Sendable (String) -> Void) async throws {
        guard let number = try await zoneNumber(zone) else { return }
        try await claims.claim(number, zone: zone, wait: wait, waiting: waiting)
    }
}
