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
            var token: SyncToken?
            if let lines = store as? any LineReading {
                // As lines, each line's content (whose canonical bytes are a record's size) read without a record made
                // of it where it can be, in parts side by side.
                while true {
                    let page = try await lines.changeLines(in: zone.zoneID, since: token, limit: linePageSize)
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
                    token = page.syncToken
                    if !page.moreComing { break }
                }
            } else {
                while true {
                    let page = try await store.changes(in: zone.zoneID, since: token, limit: pageSize)
                    let records = page.changes.compactMap { change -> Record? in if case .record(let record) = change { record } else { nil } }
                    let sizes = try await Parts.map(records) { RecordContent($0).body.count }
                    for (record, size) in zip(records, sizes) {
                        add(type: record.recordType, size: size, assets: record.fields.lazy.flatMap(\.value.assets))
                    }
                    token = page.syncToken
                    if !page.moreComing { break }
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

    /// Calls `body` with a zone's live records a page at a time, or for each one that does not decode, what is known of
    /// it: a backend that reads its feed as lines (``LineReading``) has each line decoded alone, so one damaged record
    /// does not hide the others, in parts side by side; any other backend's page fails whole.
    public static func forEachPageOrDamage(
        in zone: ZoneID, of store: any RecordStore, pageSize: Int, _ body: ([Result<Record, UndecodableRecord>]) async throws -> Void
    ) async throws {
        var token: SyncToken?
        guard let lines = store as? any LineReading else {
            while true {
                let page = try await store.changes(in: zone, since: token, limit: pageSize)
                let records = page.changes.compactMap { change -> Result<Record, UndecodableRecord>? in
                    if case .record(let record) = change { .success(record) } else { nil }
                }
                if !records.isEmpty { try await body(records) }
                token = page.syncToken
                if !page.moreComing { return }
            }
        }
        while true {
            let page = try await lines.changeLines(in: zone, since: token, limit: pageSize)
            let bytes = page.bytes
            let decoded = try await Parts.map(page.lineRanges) { range in decodeLine(bytes[range]) }
            let records = decoded.compactMap { $0 }
            if !records.isEmpty { try await body(records) }
            token = page.syncToken
            if !page.moreComing { return }
        }
    }

    /// A line's record, or what is known of it when it does not decode; `nil` for a line that is no record.
    static func decodeLine(_ line: ArraySlice<UInt8>) -> Result<Record, UndecodableRecord>? {
        do {
            guard case .record(let record) = try CloudKitJSONDecoder().decode(bytes: Array(line)) else { return nil }
            return .success(record)
        } catch {
            let names = line.withUnsafeBytes { LineNames($0) }
            return .failure(UndecodableRecord(recordType: names.recordType, recordName: names.recordName, reason: "\(error)"))
        }
    }
}
