import FerryRecords

/// What happened to one change of a copy into a local store.
public enum TransferOutcome: Sendable, Hashable {
    /// A new record.
    case created
    /// The target's record was replaced by the source's.
    case updated
    /// The target already held exactly this record (or, for a deletion, did not hold it).
    case unchanged
    /// The record was deleted from the target.
    case deleted
    /// The target holds another version and the conflict policy kept it.
    case kept(reason: String)
    /// The change could not be written.
    case rejected(code: String, reason: String)
    /// Applied by an earlier, interrupted run of the same copy (skipped on resume).
    case resumed

    /// The word for reports and `--json`.
    public var name: String {
        switch self {
        case .created: "created"
        case .updated: "updated"
        case .unchanged: "unchanged"
        case .deleted: "deleted"
        case .kept: "kept"
        case .rejected: "rejected"
        case .resumed: "resumed"
        }
    }
}

/// Counts per record type and zone.
public struct TransferTally: Sendable {
    /// One row of the summary table.
    public struct Row: Sendable, Hashable {
        public var read = 0
        public var created = 0
        public var updated = 0
        public var unchanged = 0
        public var deleted = 0
        public var kept = 0
        public var rejected = 0
        public var resumed = 0
    }

    /// The rows, by (record type, zone name), in first-seen order; deletions in `(deletions)` rows per zone.
    public private(set) var rows: [(type: String, zone: String, row: Row)] = []
    private var index: [String: Int] = [:]
    /// The row counted last.
    private var lastRow: Int?
    /// Assets newly stored, and their bytes.
    public var assets = 0
    public var assetBytes: Int64 = 0
    /// Zones created.
    public var zonesCreated = 0
    /// Records first written without the VALIDATE references that closed a cycle, then written whole at the end.
    public var patched: [(record: Record, outcome: TransferOutcome)] = []

    public init() {}

    /// Counts one outcome.
    ///
    /// `inout` only so that the change is read where it lies in the caller's batch, not copied; it is left as it is.
    public mutating func count(_ change: inout RecordChange, _ outcome: TransferOutcome) {
        let zone = change.zoneID.zoneName
        let type = change.isDeletion ? "(deletions)" : change.recordType
        let position: Int
        if let last = lastRow, rows[last].type == type, rows[last].zone == zone {
            // Changes of one type and zone come together: no key to build and hash for most of them.
            position = last
        } else {
            let key = "\(type)\u{0}\(zone)"
            if let known = index[key] {
                position = known
            } else {
                position = rows.count
                index[key] = position
                rows.append((type, zone, Row()))
            }
        }
        lastRow = position
        rows[position].row.read += 1
        switch outcome {
        case .created: rows[position].row.created += 1
        case .updated: rows[position].row.updated += 1
        case .unchanged: rows[position].row.unchanged += 1
        case .deleted: rows[position].row.deleted += 1
        case .kept: rows[position].row.kept += 1
        case .rejected: rows[position].row.rejected += 1
        case .resumed: rows[position].row.resumed += 1
        }
    }

    /// The sum of every row.
    public var total: Row {
        rows.reduce(into: Row()) { sum, entry in
            sum.read += entry.row.read
            sum.created += entry.row.created
            sum.updated += entry.row.updated
            sum.unchanged += entry.row.unchanged
            sum.deleted += entry.row.deleted
            sum.kept += entry.row.kept
            sum.rejected += entry.row.rejected
            sum.resumed += entry.row.resumed
        }
    }
}
