import FerryBackend
import FerryCore
import FerryRecords

/// Reads records through a backend's change feed.
public enum RecordFeed {
    /// Calls `body` with each page of a zone's feed from its start, `read` asking for the page after a token (`nil`
    /// for the first): the loop every reader of a whole feed runs, records or lines.
    static func forEachPage<Page: FeedPage>(
        _ read: (SyncToken?) async throws -> Page, _ body: (Page) async throws -> Void
    ) async throws {
        var token: SyncToken?
        while true {
            let page = try await read(token)
            try await body(page)
            token = page.syncToken
            if !page.moreComing { return }
        }
    }

    /// Calls `body` with every live record of a zone, in the feed's order (each record once, in its latest state).
    public static func forEachRecord(
        in zone: ZoneID, of store: any RecordStore, pageSize: Int = 500, _ body: (Record) async throws -> Void
    ) async throws {
        try await forEachPage({ try await store.changes(in: zone, since: $0, limit: pageSize) }) { page in
            for change in page.changes { if case .record(let record) = change { try await body(record) } }
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
        guard let lines = store as? any LineReading else {
            return try await forEachPage({ try await store.changes(in: zone, since: $0, limit: pageSize) }) { page in
                let records = page.changes.compactMap { change -> Result<Record, UndecodableRecord>? in
                    if case .record(let record) = change { .success(record) } else { nil }
                }
                if !records.isEmpty { try await body(records) }
            }
        }
        try await forEachPage({ try await lines.changeLines(in: zone, since: $0, limit: pageSize) }) { page in
            let bytes = page.bytes
            let decoded = try await Parts.map(page.lineRanges) { range in decodeLine(bytes[range]) }
            let records = decoded.compactMap { $0 }
            if !records.isEmpty { try await body(records) }
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
