import FerryLocalStore
import FerryRecords

/// A source narrowed to what an incremental export needs.
///
/// Records changed since a time (by a TIMESTAMP field such as `lastUpdate`), and records whose sync-status field says
/// they are pending (seeds §4: 0 add, 1 up to date, 2 delete, 3 update). Deletions always pass.
public final class FilteredChangeSource: ChangeSource {
    /// What to keep.
    public struct Filter: Sendable, Hashable {
        /// Keep records whose `sinceField` is at or after this time (milliseconds since 1970).
        public var since: Int64?
        /// The TIMESTAMP field `since` compares (records without it are kept: nothing says they are old).
        public var sinceField = "lastUpdate"
        /// Keep only pending records: the status field 0 or 3 → the record, 2 → a deletion, 1 → left out.
        public var pendingOnly = false
        /// The INT64 status field; it is not written.
        public var statusField = "cloudStatus"

        /// Keeps everything.
        public init() {}

        /// Whether anything is filtered.
        public var isActive: Bool { since != nil || pendingOnly }
    }

    let base: any ChangeSource
    let filter: Filter

    /// Filters `base`.
    public init(_ base: any ChangeSource, filter: Filter) {
        self.base = base
        self.filter = filter
    }

    public var kind: String { base.kind }
    public var description: String { base.description }
    public var assets: (any AssetProvider)? { base.assets }
    public var fingerprint: String {
        "\(base.fingerprint)|since=\(filter.since.map(String.init) ?? "")|\(filter.sinceField)|pending=\(filter.pendingOnly)"
    }
    public func canSupply(_ asset: Asset) throws -> Bool { try base.canSupply(asset) }
    public func prepare(for store: LocalStore) throws -> (assets: Int, bytes: Int64) { try base.prepare(for: store) }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        try base.forEachChange { item in
            guard case .record(var record) = item.change else { return try body(item) }
            if filter.pendingOnly, case .int64(let status)? = record.fields[filter.statusField] {
                record.fields[filter.statusField] = nil
                switch status {
                case 1: return
                case 2:
                    let deletion = Deletion(recordType: record.recordType, recordName: record.recordName, zoneID: record.zoneID)
                    return try body(SourceChange(.deletion(deletion), origin: item.origin, problems: item.problems))
                default: break
                }
            }
            if let since = filter.since, case .timestamp(let time)? = record.fields[filter.sinceField], time < since { return }
            var kept = item
            kept.change = .record(record)
            try body(kept)
        }
    }
}
