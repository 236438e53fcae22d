import FerryCore
import FerryRecords
import FerrySorting

/// What a bundle writer (or verifier) must remember of every record it sees, kept on disk in sorted runs rather than
/// in tables, so that a bundle of any size is written and checked in bounded memory.
///
/// Three answers need every record: which identities occur twice in a zone, which record types reference which
/// (for the dependency order), and which targets have more DELETE_SELF references than CloudKit allows. Each record
/// notes its identity and its references as fixed-size entries in an ``ExternalSorter``; ``resolve()`` merges them by
/// key, where an identity's occurrences and the references to it are neighbours. The price is that these answers
/// come when the bundle is finished rather than as each record is added.
///
/// Each entry says where its record's line is (a ``FileLine``: a run of the spool and its 0-based line there for a writer,
/// see ``RecordSpool/place(run:line:)``; a record file of the bundle and its line for a verifier), so that the rare
/// record an answer names can be read back.
final class RecordLedger {
    /// A later occurrence of an identity already admitted.
    struct Duplicate: Sendable {
        /// The later occurrence.
        var sequence: Int64
        var location: FileLine
    }

    /// A reference that took its target past the DELETE_SELF limit.
    struct Overflow: Sendable {
        /// The referencing record.
        var sequence: Int64
        var location: FileLine
        /// The target.
        var target: RecordKey
    }

    /// What the entries say, with any duplicates' own references left out.
    struct Resolution: Sendable {
        var duplicates: [Duplicate] = []
        /// Pairs of record type indexes: records of `child` reference records of `parent`.
        var edges: Set<RecordTypeGraph.Edge> = []
        /// Distinct (referencing type, target) pairs whose target is not in the bundle.
        var danglingReferences = 0
        var overflows: [Overflow] = []
    }

    /// One identity or reference, sorted by key, then kind (identities first), then sequence.
    private struct Entry: Comparable, BitwiseCopyable {
        var high: UInt64
        var low: UInt64
        /// The kind in the top two bits (``identityKind``, ``referenceKind``), the sequence number below.
        var order: UInt64
        /// The record's line, packed (``FileLine/packed``).
        var location: Int64
        /// An identity's type index; a reference's referencing type (above bit 32) and DELETE_SELF bit.
        var extra: UInt64

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            if lhs.high != rhs.high { return lhs.high < rhs.high }
            if lhs.low != rhs.low { return lhs.low < rhs.low }
            if lhs.order != rhs.order { return lhs.order < rhs.order }
            return lhs.extra < rhs.extra
        }

        var kind: UInt64 { order >> 62 }
        var sequence: Int64 { Int64(order & ~(3 << 62)) }
        var place: FileLine { FileLine(packed: location) }
    }

    private static let identityKind: UInt64 = 0
    private static let referenceKind: UInt64 = 1
    private let sorter: ExternalSorter<Entry>
    private let deleteSelfLimit: Int

    /// A ledger keeping at most `memoryLimit` bytes of entries in memory, spilling to `temporaryDirectory`.
    init(memoryLimit: Int = 8 << 20, deleteSelfLimit: Int, temporaryDirectory: String?) {
        // Keys are hashes: entries sort by distributing them on their first word (``PrefixBucketSort``).
        sorter = ExternalSorter(memoryLimit: memoryLimit, prefix: "ferry-ledger", temporaryDirectory: temporaryDirectory, sortPrefix: { $0.high })
        self.deleteSelfLimit = deleteSelfLimit
    }

    /// The largest sequence number an entry can hold.
    static let maxSequence = Int64(1) << 62 - 1

    /// Notes an admitted record's (or deletion's) identity.
    /// - Parameter type: the record type's index.
    func noteIdentity(_ key: RecordKey, type: Int32, sequence: Int64, at location: FileLine) throws {
        try Self.check(sequence, location)
        try sorter.append(
            Entry(
                high: key.words.high, low: key.words.low, order: Self.identityKind << 62 | UInt64(sequence), location: location.packed,
                extra: UInt64(UInt32(bitPattern: type))))
    }

    /// Notes a reference from an admitted record of type `from` (its index) to `target`.
    func noteReference(to target: RecordKey, from type: Int32, deleteSelf: Bool, sequence: Int64, at location: FileLine) throws {
        try Self.check(sequence, location)
        try sorter.append(
            Entry(
                high: target.words.high, low: target.words.low, order: Self.referenceKind << 62 | UInt64(sequence), location: location.packed,
                extra: UInt64(UInt32(bitPattern: type)) << 32 | (deleteSelf ? 1 : 0)))
    }

    /// Merges the entries: duplicates, edges between types, dangling references and DELETE_SELF overflows.
    ///
    /// When there are duplicates, a second merge leaves out the references the duplicates made, so the answer is what
    /// it would have been had they never been added.
    func resolve() throws -> Resolution {
        var resolution = try merge(excluding: [])
        if !resolution.duplicates.isEmpty {
            let duplicates = resolution.duplicates
            resolution = try merge(excluding: Set(duplicates.map(\.sequence)))
            resolution.duplicates = duplicates
        }
        return resolution
    }

    /// Forgets every entry and removes the scratch runs.
    func reset() { sorter.reset() }

    private func merge(excluding excluded: Set<Int64>) throws -> Resolution {
        var resolution = Resolution()
        var group: (high: UInt64, low: UInt64)?
        var owner: Int32?
        /// The types referencing the current key when it is not in the bundle: a handful at most.
        var danglingFrom: [Int32] = []
        var deleteSelfCount = 0
        // Most references repeat the edge before them (a type's records point at the same parent type): comparing
        // with it skips hashing one per reference on this single thread.
        var lastEdge: RecordTypeGraph.Edge?
        try sorter.forEachSorted { entry in
            if group.map({ $0.high != entry.high || $0.low != entry.low }) ?? true {
                group = (entry.high, entry.low)
                owner = nil
                danglingFrom.removeAll(keepingCapacity: true)
                deleteSelfCount = 0
            }
            if !excluded.isEmpty, excluded.contains(entry.sequence) { return }
            if entry.kind == Self.identityKind {
                if owner == nil {
                    owner = Int32(bitPattern: UInt32(truncatingIfNeeded: entry.extra))
                } else {
                    resolution.duplicates.append(Duplicate(sequence: entry.sequence, location: entry.place))
                }
                return
            }
            let child = Int32(bitPattern: UInt32(truncatingIfNeeded: entry.extra >> 32))
            if let owner {
                let edge = RecordTypeGraph.Edge(child: child, parent: owner)
                if owner != child, edge != lastEdge {
                    resolution.edges.insert(edge)
                    lastEdge = edge
                }
            } else if !danglingFrom.contains(child) {
                danglingFrom.append(child)
                resolution.danglingReferences += 1
            }
            if entry.extra & 1 == 1 {
                deleteSelfCount += 1
                if deleteSelfCount == deleteSelfLimit + 1 {
                    resolution.overflows.append(
                        Overflow(sequence: entry.sequence, location: entry.place, target: RecordKey(high: entry.high, low: entry.low)))
                }
            }
        }
        resolution.duplicates.sort { $0.sequence < $1.sequence }
        resolution.overflows.sort { $0.sequence < $1.sequence }
        return resolution
    }

    /// Refuses what an entry cannot hold (only a hostile bundle gets there: millions of record files, say).
    private static func check(_ sequence: Int64, _ location: FileLine) throws {
        guard (0...maxSequence).contains(sequence), location.fits else {
            throw BundleError(
                .invalidMetadata,
                "more record files (\(location.file + 1)), lines (\(location.line + 1)) or changes (\(sequence)) than Ferry can check: "
                    + "at most \(FileLine.maxFile + 1) files of \(FileLine.maxLine + 1) lines, \(maxSequence) changes")
        }
    }
}
