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

    /// Reads a backend's zones and records (the distinct assets' digests are held in memory: 40 bytes each), as of
    /// one moment where the backend can be read so (``SnapshotReading``): `pageSize` records at a time, or
    /// `linePageSize` lines from a backend that reads its feed as lines (``LineReading``).
    public static func read(_ store: any RecordStore, pageSize: Int = 2_000, linePageSize: Int = 10_000) async throws -> StoreListing {
        try await store.withSnapshot { reader in try await read(from: reader, pageSize: pageSize, linePageSize: linePageSize) }
    }

    private static func read(from store: any RecordStore, pageSize: Int, linePageSize: Int) async throws -> StoreListing {
        var zones: [ZoneSummary] = []
        var rows: [Row] = []
        var seen: [SHA256Digest: Int64] = [:]
        // The zones' counts are the records read: a count of its own would read every zone once more.
        for zone in try await store.zoneTokens() {
            var positions: [String: Int] = [:]
            var count = 0
            func add(type: String, size: Int, assets: some Sequence<Asset>) {
                let position: Int
                if let known = positions[type] {
                    position = known
                } else {
                    position = rows.count
                    positions[type] = position
                    rows.append(Row(recordType: type, zoneID: zone.zoneID, count: 0, bytes: 0))
                }
                rows[position].count += 1
                rows[position].bytes += Int64(size)
                for asset in assets { seen[asset.sha256] = asset.size }
                count += 1
            }
            if let lines = store as? any LineReading {
                // As lines, each line's content (whose canonical bytes are a record's size) read without a record made
                // of it where it can be, in parts side by side.
                try await RecordFeed.forEachPage({ try await lines.changeLines(in: zone.zoneID, since: $0, limit: linePageSize) }) { page in
                    let (ranges, bytes) = (page.lineRanges, page.bytes)
                    let parts = stride(from: 0, to: ranges.count, by: 500).map { ranges[$0..<min($0 + 500, ranges.count)] }
                    let sized = try await Parts.map(parts, minimumPart: 1) { part in
                        var reader = LineContentReader()
                        return part.map { range -> SizedLine in
                            switch reader.read(bytes[range]) {
                            case .content(let content)?:
                                .sized(type: content.recordType, size: content.body.count, assets: content.assets.map(\.asset))
                            case .damaged(let damage)?: .damaged(damage)
                            case nil: .none
                            }
                        }
                    }
                    for line in sized.joined() {
                        switch line {
                        case .sized(let type, let size, let assets): add(type: type, size: size, assets: assets)
                        case .damaged(let damage):
                            throw BackendError.undecodableLine(
                                origin: "\(store.name) \(zone.zoneID)", recordName: damage.recordName, reason: damage.reason)
                        case .none: continue
                        }
                    }
                }
            } else {
                try await RecordFeed.forEachPage({ try await store.changes(in: zone.zoneID, since: $0, limit: pageSize) }) { page in
                    let records = page.changes.compactMap { change -> Record? in if case .record(let record) = change { record } else { nil } }
                    let sizes = try await Parts.map(records) { RecordContent($0).body.count }
                    for (record, size) in zip(records, sizes) {
                        add(type: record.recordType, size: size, assets: record.fields.lazy.flatMap(\.value.assets))
                    }
                }
            }
            zones.append(ZoneSummary(zoneID: zone.zoneID, syncToken: zone.syncToken, recordCount: count))
        }
        return StoreListing(zones: zones, rows: rows, assets: seen.count, assetBytes: seen.values.reduce(0, +))
    }
}

/// What a listing makes of one line of a feed: its record's type, size and assets, or why it does not decode.
private enum SizedLine: Sendable {
    case sized(type: String, size: Int, assets: [Asset])
    case damaged(RecordFeed.UndecodableRecord)
    /// A line that is no record.
    case none
}
