import FerryBackend
import FerryCore
import FerryJSON
import FerryRecords
import FerrySorting
import Foundation

/// Compares two sources record by record, by content digest (system fields such as change tags left out): the
/// check to run after a migration.
public enum RecordDiff {
    /// One difference.
    public enum Difference: Sendable, Hashable {
        /// A record only the first source has.
        case onlyInFirst(RecordID, recordType: String)
        /// A record only the second source has.
        case onlyInSecond(RecordID, recordType: String)
        /// Both have the record, with different contents: the first few fields that differ (empty when the record
        /// type differs, or past ``maxDetailed`` differing records).
        case differs(RecordID, recordType: String, fields: [FieldDifference])
        /// A record's asset whose bytes a source cannot provide.
        case missingAsset(RecordID, field: String, SHA256Digest, inFirst: Bool)
    }

    /// A field whose value differs between the two sides, with both values shortened for people (`nil`: absent).
    public struct FieldDifference: Sendable, Hashable {
        public var name: String
        public var first: String?
        public var second: String?

        public init(name: String, first: String?, second: String?) {
            self.name = name
            self.first = first
            self.second = second
        }
    }

    /// How many differing records are compared field by field (each is read back from the first source and held).
    public static let maxDetailed = 1000

    /// How many differing fields of a record are named.
    public static let maxFieldsNamed = 3

    /// The counts of a comparison.
    public struct Summary: Sendable, Hashable {
        public var first = 0
        public var second = 0
        public var identical = 0
        public var differing = 0
        public var onlyInFirst = 0
        public var onlyInSecond = 0
        public var missingAssets = 0

        /// Whether the sources hold the same records with the same contents and every asset.
        public var isIdentical: Bool { differing == 0 && onlyInFirst == 0 && onlyInSecond == 0 && missingAssets == 0 }
    }

    /// One record of either source, as little as the comparison needs: its key, content digest, side and place.
    private struct Entry: Comparable, BitwiseCopyable {
        var high: UInt64
        var low: UInt64
        var digest: SHA256Digest
        /// The side in the top bit (0 first, 1 second), the record's position among its source's records below.
        var place: UInt64

        init(key: RecordKey, digest: SHA256Digest, second: Bool, position: Int) {
            (high, low) = key.words
            self.digest = digest
            place = (second ? 1 << 63 : 0) | UInt64(position)
        }

        var isSecond: Bool { place >> 63 == 1 }
        var position: Int { Int(place & ~(1 << 63)) }
        var key: RecordKey { RecordKey(high: high, low: low) }
        func sameKey(as other: Entry) -> Bool { high == other.high && low == other.low }

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.high, lhs.low, lhs.place) < (rhs.high, rhs.low, rhs.place)
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.high == rhs.high && lhs.low == rhs.low && lhs.place == rhs.place
        }
    }

    /// Compares the live records of two sources (deletions mean "absent"); `report` gets each difference.
    ///
    /// Memory stays bounded whatever the sources hold: each record becomes a key, a content digest and its place, and
    /// these are sorted in runs in scratch files (`temporaryDirectory`) and merged. The records that differ are then
    /// named by reading their source again, only when there are any: in the second source's order, then those only in
    /// the first by zone and name.
    /// - Parameters:
    ///   - memoryLimit: bytes of records' keys and digests kept in memory before they go to a scratch file.
    ///   - progress: called with the number of records read from both sources so far.
    /// - Throws: what the sources throw, ``TransferError`` (`sourceChanged`) when a source reads differently the
    ///   second time, ``CoreError`` when scratch files cannot be written.
    public static func compare(
        _ first: any ChangeSource, _ second: any ChangeSource, temporaryDirectory: String? = nil, memoryLimit: Int = 8 << 20,
        progress: ((Int) -> Void)? = nil, report: (Difference) throws -> Void
    ) throws -> Summary {
        let sorter = ExternalSorter<Entry>(memoryLimit: memoryLimit, prefix: "ferry-diff", temporaryDirectory: temporaryDirectory)
        defer { sorter.reset() }
        var summary = try readBoth(first, second, into: sorter, progress: progress, report: report)
        // By key: the first source's last record of a key against the second's first; the second's later ones are
        // extra (a key twice in the first counts once, as a map would keep it).
        var secondReports: [Int: (key: RecordKey, differs: Bool)] = [:]
        /// For the first ``maxDetailed`` differing records: the first source's position, by the second's.
        var firstOfDiffering: [Int: (position: Int, key: RecordKey)] = [:]
        var onlyFirst: [Int: RecordKey] = [:]
        var last: Entry?
        var inFirst: Entry?
        var matched = false
        func endKey() {
            if let inFirst, !matched { onlyFirst[inFirst.position] = inFirst.key }
        }
        try sorter.forEachSorted { entry in
            if let previous = last, !previous.sameKey(as: entry) {
                endKey()
                inFirst = nil
                matched = false
            }
            last = entry
            if !entry.isSecond {
                inFirst = entry
            } else if let known = inFirst, !matched {
                matched = true
                if known.digest == entry.digest {
                    summary.identical += 1
                } else {
                    summary.differing += 1
                    secondReports[entry.position] = (entry.key, true)
                    if firstOfDiffering.count < maxDetailed { firstOfDiffering[entry.position] = (known.position, known.key) }
                }
            } else {
                summary.onlyInSecond += 1
                secondReports[entry.position] = (entry.key, false)
            }
        }
        endKey()
        summary.onlyInFirst = onlyFirst.count
        // One more reading of the first source, only when needed: the first side of the differing records (compared
        // field by field) and the names of those only in the first.
        var firstRecords: [Int: Record] = [:]
        var rest: [(id: RecordID, type: String)] = []
        var wantedFirst = onlyFirst
        for (position, key) in firstOfDiffering.values { wantedFirst[position] = key }
        try name(wantedFirst, in: first) { record, position in
            if onlyFirst[position] != nil { rest.append((record.id, record.recordType)) } else { firstRecords[position] = record }
        }
        try name(secondReports.mapValues(\.key), in: second) { record, position in
            let type = record.recordType
            guard secondReports[position]?.differs == true else { return try report(.onlyInSecond(record.id, recordType: type)) }
            let fields = firstOfDiffering[position].flatMap { firstRecords[$0.position] }.map { fieldDifferences($0, record) } ?? []
            try report(.differs(record.id, recordType: type, fields: fields))
        }
        rest.sort { ($0.id.zoneID.zoneName, $0.id.recordName) < ($1.id.zoneID.zoneName, $1.id.recordName) }
        for value in rest { try report(.onlyInFirst(value.id, recordType: value.type)) }
        return summary
    }

    /// Reads both sources side by side, each on a thread of its own that computes its records' keys and digests and
    /// checks their assets, into `sorter` on the calling thread (which alone uses the sorter, `progress` and `report`).
    ///
    /// Side by side: a Core Data store is bound by its reading thread and a database by its requests, so one read
    /// after the other left a core idle for most of each. Either side's failure stops the other at its next batch.
    private static func readBoth(
        _ first: any ChangeSource, _ second: any ChangeSource, into sorter: ExternalSorter<Entry>, progress: ((Int) -> Void)?,
        report: (Difference) throws -> Void
    ) throws -> Summary {
        let queue = HandOverQueue<SideBatch>(depth: SideBatch.depth, producers: 2)
        var threads: [Thread] = []
        for (source, isSecond) in [(first, false), (second, true)] {
            // Each source is used by its thread only, until the thread is done.
            let handed = HandedSource(source)
            let thread = Thread { [queue, handed] in
                do {
                    try read(handed.source, isSecond: isSecond, into: queue)
                    queue.finish(nil)
                } catch {
                    queue.finish(error)
                }
            }
            thread.stackSize = 8 << 20
            threads.append(thread)
        }
        for thread in threads { thread.start() }
        var summary = Summary()
        do {
            while let batch = try queue.pop() {
                for entry in batch.entries { try sorter.append(entry) }
                if batch.isSecond { summary.second += batch.entries.count } else { summary.first += batch.entries.count }
                summary.missingAssets += batch.missing.count
                for difference in batch.missing { try report(difference) }
                progress?(summary.first + summary.second)
            }
        } catch {
            queue.cancel()
            queue.waitUntilFinished()
            throw error
        }
        return summary
    }

    /// One side's records, a batch at a time, into the queue: each record's entry (its digest computed here) and its
    /// assets the source cannot provide.
    ///
    /// A source that reads lines (a database) is read as lines, each line's content read without a record made of it
    /// where it can be (``LineContentReader``).
    private static func read(_ source: any ChangeSource, isSecond: Bool, into queue: HandOverQueue<SideBatch>) throws {
        var batch = SideBatch(isSecond: isSecond)
        var position = 0
        let provider = source.assets
        func add(_ key: RecordKey, _ digest: SHA256Digest, id: () -> RecordID, assets: [(field: String, asset: Asset)]) throws {
            batch.entries.append(Entry(key: key, digest: digest, second: isSecond, position: position))
            position += 1
            if let provider {
                for (field, asset) in assets where try !provider.canProvide(asset) {
                    batch.missing.append(.missingAsset(id(), field: field, asset.sha256, inFirst: !isSecond))
                }
            }
            if batch.entries.count == SideBatch.size {
                try queue.push(batch)
                batch = SideBatch(isSecond: isSecond)
            }
        }
        func add(_ record: Record) throws {
            try add(RecordKey(record.id), record.contentDigest, id: { record.id }, assets: record.fields.assetsByField)
        }
        if let lines = source as? any LineChangeSource, lines.readsLines {
            var reader = LineContentReader()
            try lines.forEachLinePage { changes in
                for range in changes.page.lineRanges {
                    switch reader.read(changes.page.bytes[range]) {
                    case .content(let content)?:
                        let (name, zone) = (content.recordName, content.zoneID)
                        try add(
                            RecordKey(zoneName: zone.zoneName, ownerName: zone.ownerName, recordName: name), SHA256Hasher.digest(content.body),
                            id: { RecordID(recordName: name, zoneID: zone) }, assets: content.assets)
                    case .damaged(let damage)?:
                        throw BackendError.undecodableLine(origin: changes.origin, recordName: damage.recordName, reason: damage.reason)
                    case nil: continue
                    }
                }
            }
        } else {
            try source.forEachChange { change in
                if case .record(let record) = change.change { try add(record) }
            }
        }
        if !batch.entries.isEmpty { try queue.push(batch) }
    }

    /// A source handed to the thread that reads it.
    private struct HandedSource: @unchecked Sendable {
        let source: any ChangeSource
        init(_ source: any ChangeSource) { self.source = source }
    }

    /// Records of one side on their way to the calling thread.
    private struct SideBatch: Sendable {
        static let size = 1024
        /// Batches in flight: 64 of 1 024 entries (72 bytes each) is under 5 MB.
        static let depth = 64
        let isSecond: Bool
        var entries: [Entry] = []
        var missing: [Difference] = []
    }

    /// The first ``maxFieldsNamed`` fields whose values differ (by name), with both values shortened.
    static func fieldDifferences(_ first: Record, _ second: Record) -> [FieldDifference] {
        var found: [FieldDifference] = []
        if first.recordType != second.recordType {
            found.append(FieldDifference(name: "recordType", first: first.recordType, second: second.recordType))
        }
        let names = Set(first.fields.names).union(second.fields.names).sorted()
        for name in names where found.count < maxFieldsNamed {
            let (a, b) = (first.fields[name], second.fields[name])
            guard a != b else { continue }
            found.append(FieldDifference(name: name, first: a.map(shortened), second: b.map(shortened)))
        }
        return found
    }

    /// A value as canonical JSON, at most 40 characters.
    private static func shortened(_ value: FieldValue) -> String {
        var writer = JSONWriter()
        value.writeValue(to: &writer)
        let text = String(decoding: writer.bytes, as: UTF8.self)
        return text.count > 40 ? String(text.prefix(37)) + "…" : text
    }

    /// Reads a source again for the records at some positions, checking that each still has its key.
    private static func name(_ wanted: [Int: RecordKey], in source: any ChangeSource, _ visit: (Record, Int) throws -> Void) throws {
        guard !wanted.isEmpty else { return }
        var position = 0
        var found = 0
        try source.forEachChange { change in
            guard case .record(let record) = change.change else { return }
            defer { position += 1 }
            guard let key = wanted[position] else { return }
            guard key == RecordKey(record.id) else { throw sourceChanged(source) }
            found += 1
            try visit(record, position)
        }
        guard found == wanted.count else { throw sourceChanged(source) }
    }

    private static func sourceChanged(_ source: any ChangeSource) -> TransferError {
        TransferError(.sourceChanged, "\(source.description) changed while it was compared; run again when nothing writes it")
    }
}
