import FerryBackend
import FerryCore
import FerryRecords

/// What a backend holds, for `ferry ls`: its zones, its record types with counts and bytes per zone, and the assets
/// its records use, read through the backend contract (the change feed of every zone).
public struct StoreListing: Sendable {
    /// One record type in one zone.
    public struct Row: Sendable, Hashable {
        /// The record type.
        public var recordType: String
        /// The zone.
        public var zoneID: ZoneID
        /// Live records.
        public var count: Int
        /// Their canonical JSON, without system fields.
        public var bytes: Int64
    }

    /// Every zone, the default zone first.
    public var zones: [ZoneSummary]
    /// Record types per zone, zone by zone, in the order the types first come in each zone's feed.
    public var rows: [Row]
    /// Distinct assets the records use.
    public var assets: Int
    /// Their bytes.
    public var assetBytes: Int64

    /// Live records in all zones.
    public var recordCount: Int { rows.reduce(0) { $0 + $1.count } }

    /// Reads a backend's zones and records (the distinct assets' digests are held in memory: 40 bytes each).
    public static func read(_ store: any RecordStore, pageSize: Int = 500) async throws -> StoreListing {
        let zones = try await store.zones()
        var rows: [Row] = []
        var seen: [SHA256Digest: Int64] = [:]
        for zone in zones {
            var positions: [String: Int] = [:]
            try await RecordFeed.forEachRecord(in: zone.zoneID, of: store, pageSize: pageSize) { record in
                let position: Int
                if let known = positions[record.recordType] {
                    position = known
                } else {
                    position = rows.count
                    positions[record.recordType] = position
                    rows.append(Row(recordType: record.recordType, zoneID: zone.zoneID, count: 0, bytes: 0))
                }
                rows[position].count += 1
                rows[position].bytes += Int64(RecordContent(record).body.count)
                for field in record.fields { for asset in field.value.assets { seen[asset.sha256] = asset.size } }
            }
        }
        return StoreListing(zones: zones, rows: rows, assets: seen.count, assetBytes: seen.values.reduce(0, +))
    }
}

/// Reads records through a backend's change feed.
public enum RecordFeed {
    /// Calls `body` with every live record of a zone, in the feed's order (each record once, in its latest state).
    public static func forEachRecord(
        in zone: ZoneID, of store: any RecordStore, pageSize: Int = 500, _ body: (Record) async throws -> Void
    ) async throws {
        var token: SyncToken?
        while true {
            let page = try await store.changes(in: zone, since: token, limit: pageSize)
            for change in page.changes { if case .record(let record) = change { try await body(record) } }
            token = page.syncToken
            if !page.moreComing { return }
        }
    }

    /// A stored record that does not decode: its type and name as its stored form gives them, and why.
    public struct UndecodableRecord: Sendable, Error {
        public var recordType: String?
        public var recordName: String?
        public var reason: String
    }

    /// Calls `body` with every live record of a zone, or for each one that does not decode, what is known of it: a
    /// backend that reads its feed as lines (``LineReading``) has each line decoded alone, so one damaged record does
    /// not hide the others; any other backend's page fails whole.
    public static func forEachRecordOrDamage(
        in zone: ZoneID, of store: any RecordStore, pageSize: Int = 500, _ body: (Result<Record, UndecodableRecord>) async throws -> Void
    ) async throws {
        guard let lines = store as? any LineReading else {
            return try await forEachRecord(in: zone, of: store, pageSize: pageSize) { try await body(.success($0)) }
        }
        var token: SyncToken?
        while true {
            let page = try await lines.changeLines(in: zone, since: token, limit: pageSize)
            var start = 0
            for entry in page.entries {
                guard case .line(let end) = entry else { continue }
                let line = Array(page.bytes[start..<end])
                start = end
                let decoded: Result<Record, UndecodableRecord>
                do {
                    guard case .record(let record) = try CloudKitJSONDecoder().decode(bytes: line) else { continue }
                    decoded = .success(record)
                } catch {
                    let names = line.withUnsafeBytes { LineNames($0) }
                    decoded = .failure(UndecodableRecord(recordType: names.recordType, recordName: names.recordName, reason: "\(error)"))
                }
                try await body(decoded)
            }
            token = page.syncToken
            if !page.moreComing { return }
        }
    }
}
