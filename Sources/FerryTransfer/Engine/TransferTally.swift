import FerryCore
import FerryRecords
import FerrySorting

/// What happened to one change of a copy into a backend.
public enum TransferOutcome: Sendable, Hashable {
    /// A new record.
    case created
    /// The target's record was replaced by the source's.
    case updated
    /// The target already held exactly this record.
    case unchanged
    /// A deletion of a record the target does not hold (never had, or already deleted): nothing to do.
    case absent
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
        case .absent: "absent"
        case .deleted: "deleted"
        case .kept: "kept"
        case .rejected: "rejected"
        case .resumed: "resumed"
        }
    }
}

/// Counts per record type and zone, in bounded memory whatever their number.
///
/// An app with a zone per user or per share may have hundreds of thousands of zones, so past ``memoryRows`` rows the
/// tally moves its rows to a scratch file and starts afresh; ``forEachRow(_:)`` adds up the rows of each type and zone
/// there and hands them over in first-seen order. A tally is counted into by one owner: a copy of a tally that moved
/// rows to a scratch file shares that file.
public struct TransferTally: Sendable {
    /// One row of the summary table.
    public struct Row: Sendable, Hashable {
        public var read = 0
        public var created = 0
        public var updated = 0
        public var unchanged = 0
        public var absent = 0
        public var deleted = 0
        public var kept = 0
        public var rejected = 0
        public var resumed = 0

        /// How many counts ``counts`` holds.
        fileprivate static let countFields = 9

        /// The counts in a fixed order, for scratch records.
        fileprivate var counts: [Int] { [read, created, updated, unchanged, deleted, kept, rejected, resumed, absent] }

        fileprivate init() {}

        fileprivate init(counts: [Int]) {
            (read, created, updated, unchanged, deleted, kept, rejected, resumed, absent) =
                (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7], counts[8])
        }

        /// Adds another row's counts.
        fileprivate mutating func add(_ other: Row) { self = Row(counts: zip(counts, other.counts).map { $0 + $1 }) }

        /// Counts one outcome (the hot path: one field, no arrays).
        fileprivate mutating func note(_ outcome: TransferOutcome) {
            read += 1
            switch outcome {
            case .created: created += 1
            case .updated: updated += 1
            case .unchanged: unchanged += 1
            case .absent: absent += 1
            case .deleted: deleted += 1
            case .kept: kept += 1
            case .rejected: rejected += 1
            case .resumed: resumed += 1
            }
        }
    }

    /// The sum of every row.
    public private(set) var total = Row()
    /// Assets newly stored, and their bytes.
    public var assets = 0
    public var assetBytes: Int64 = 0
    /// Zones created.
    public var zonesCreated = 0
    /// Records first written without the VALIDATE references that closed a cycle, then written whole at the end.
    public var patched: [(record: Record, outcome: TransferOutcome)] = []

    /// Rows kept in memory before they go to a scratch file.
    public let memoryRows: Int
    private let temporaryDirectory: String?
    /// The rows in memory, by (record type, zone name), each with its place in first-seen order.
    private var rows: [Entry] = []
    private var index: [String: Int] = [:]
    /// The row counted last.
    private var lastRow: Int?
    /// Rows started so far: the next row's place in first-seen order.
    private var started = 0
    /// Each record type's place in first-seen order (sources give parents first, so this is dependency order).
    private var typeRanks: [String: Int] = [:]
    private var spill: Spill?

    /// An empty tally keeping at most `memoryRows` rows in memory, the others in a scratch directory under
    /// `temporaryDirectory` (default `$TMPDIR`).
    public init(temporaryDirectory: String? = nil, memoryRows: Int = 4096) {
        self.temporaryDirectory = temporaryDirectory
        self.memoryRows = max(1, memoryRows)
    }

    /// Counts one outcome.
    ///
    /// `inout` only so that the change is read where it lies in the caller's batch, not copied; it is left as it is.
    /// - Throws: ``FerryCore/CoreError`` when rows cannot be moved to the scratch file.
    public mutating func count(_ change: inout RecordChange, _ outcome: TransferOutcome) throws {
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
                if rows.count == memoryRows { try moveRowsToScratch() }
                position = rows.count
                index[key] = position
                if typeRanks[type] == nil { typeRanks[type] = typeRanks.count }
                rows.append((type, zone, Row(), started))
                started += 1
            }
        }
        lastRow = position
        rows[position].row.note(outcome)
        total.note(outcome)
    }

    /// Calls `body` with each record type and zone and its counts: types in the order they were first counted (a
    /// source's dependency order), each type's zones by name, so the same copy always prints the same table.
    /// - Throws: ``FerryCore/CoreError`` when the scratch file cannot be read or sorted, or what `body` throws.
    public func forEachRow(_ body: (_ type: String, _ zone: String, _ row: Row) throws -> Void) throws {
        guard let spill else {
            let ordered = rows.sorted { lhs, rhs in
                let (left, right) = (typeRanks[lhs.type] ?? 0, typeRanks[rhs.type] ?? 0)
                return left != right ? left < right : lhs.zone.utf8.lexicographicallyPrecedes(rhs.zone.utf8)
            }
            for entry in ordered { try body(entry.type, entry.zone, entry.row) }
            return
        }
        // A type and zone may have rows in the scratch file and in memory: merge both streams by key (the rows in
        // memory sorted as the file's are), add up each key's rows, then put them back in first-seen order.
        let memory = rows.map(Self.record).sorted { a, b in a.withUnsafeBytes { a in b.withUnsafeBytes { ExternalByteSorter.precedes(a, $0) } } }
        var nextInMemory = memory.startIndex
        let inOrder = ExternalByteSorter(prefix: "ferry-tally", temporaryDirectory: temporaryDirectory)
        var current: Entry?
        func finishCurrent() throws {
            guard let done = current else { return }
            var record = ByteRecordWriter()
            record.uint64(UInt64(typeRanks[done.type] ?? 0))
            record.key(done.zone)
            record.raw(Self.record(done))
            try inOrder.append(record.bytes)
        }
        func add(_ bytes: UnsafeRawBufferPointer) throws {
            var reader = ByteRecordReader(bytes)
            let entry = try Self.entry(&reader)
            if let known = current, known.type == entry.type, known.zone == entry.zone {
                current?.row.add(entry.row)
                current?.first = min(known.first, entry.first)
            } else {
                try finishCurrent()
                current = entry
            }
        }
        try spill.rows.forEachSorted { bytes in
            while nextInMemory < memory.endIndex, memory[nextInMemory].withUnsafeBytes({ ExternalByteSorter.precedes($0, bytes) }) {
                try memory[nextInMemory].withUnsafeBytes(add)
                nextInMemory += 1
            }
            try add(bytes)
        }
        for record in memory[nextInMemory...] { try record.withUnsafeBytes(add) }
        try finishCurrent()
        try inOrder.forEachSorted { bytes in
            var reader = ByteRecordReader(bytes)
            _ = try reader.uint64()
            _ = try reader.key()
            let entry = try Self.entry(&reader)
            try body(entry.type, entry.zone, entry.row)
        }
    }

    /// Moves the rows in memory to the scratch file, sorted by record type and zone.
    private mutating func moveRowsToScratch() throws {
        let target = spill ?? Spill(temporaryDirectory: temporaryDirectory)
        spill = target
        for entry in rows { try target.rows.append(Self.record(entry)) }
        rows.removeAll(keepingCapacity: true)
        index.removeAll(keepingCapacity: true)
        lastRow = nil
    }

    /// A row with its record type and zone and its place in first-seen order.
    private typealias Entry = (type: String, zone: String, row: Row, first: Int)

    /// A row as a scratch record: its type and zone as keys (so that records sort by them), its place, its counts.
    private static func record(_ entry: Entry) -> [UInt8] {
        var record = ByteRecordWriter()
        record.key(entry.type)
        record.key(entry.zone)
        record.uint64(UInt64(entry.first))
        for count in entry.row.counts { record.uint64(UInt64(count)) }
        return record.bytes
    }

    /// Reads a row ``record(_:)`` wrote.
    private static func entry(_ reader: inout ByteRecordReader) throws -> Entry {
        let type = try reader.key()
        let zone = try reader.key()
        let first = Int(try reader.uint64())
        return (type, zone, Row(counts: try (0..<Row.countFields).map { _ in Int(try reader.uint64()) }), first)
    }

    /// The rows moved out of memory.
    ///
    /// Only the tally that made it appends to it, on the thread that counts (`@unchecked`: not for concurrent use).
    private final class Spill: @unchecked Sendable {
        let rows: ExternalByteSorter

        init(temporaryDirectory: String?) {
            rows = ExternalByteSorter(memoryLimit: 2 << 20, prefix: "ferry-tally", temporaryDirectory: temporaryDirectory)
        }
    }
}
