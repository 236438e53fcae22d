import FerryCore

/// Finds the record keys that occur more than once in a stream of any length, in bounded memory.
///
/// A set of every key would grow with the stream (about 30 bytes a record: a 100 MB budget ends near three million
/// records). Instead keys are sorted with their positions by an ``ExternalSorter`` (runs of a bounded size, spilled to
/// scratch files and merged), so repeated keys become neighbours.
///
/// ```swift
/// let finder = try DuplicateKeyFinder(temporaryDirectory: nil)
/// try finder.insert(RecordKey(record.id), at: position)
/// for repeated in try finder.duplicates() { report(repeated.first, repeated.again) }
/// ```
public final class DuplicateKeyFinder {
    /// A key and where it occurred.
    private struct Entry: Comparable {
        var high: UInt64
        var low: UInt64
        var position: Int64

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            if lhs.high != rhs.high { return lhs.high < rhs.high }
            if lhs.low != rhs.low { return lhs.low < rhs.low }
            return lhs.position < rhs.position
        }

        func sameKey(as other: Entry) -> Bool { high == other.high && low == other.low }
    }

    private let sorter: ExternalSorter<Entry>

    /// A finder that keeps at most `memoryLimit` bytes of keys in memory (24 bytes each; sorting a full buffer takes
    /// half as much again).
    /// - Parameter temporaryDirectory: where runs go when the keys do not fit (default `$TMPDIR`).
    public init(memoryLimit: Int = 8 << 20, temporaryDirectory: String?) {
        sorter = ExternalSorter(memoryLimit: memoryLimit, prefix: "ferry-keys", temporaryDirectory: temporaryDirectory)
    }

    /// Notes a key at a position; positions must increase from call to call.
    /// - Throws: ``CoreError`` when a run cannot be written.
    public func insert(_ key: RecordKey, at position: Int64) throws {
        try sorter.append(Entry(high: key.words.high, low: key.words.low, position: position))
    }

    /// Every later occurrence of a key, with its first occurrence, ordered by the later position.
    /// - Throws: ``CoreError`` when a run cannot be read back.
    public func duplicates() throws -> [(first: Int64, again: Int64)] {
        var found: [(first: Int64, again: Int64)] = []
        var first: Entry?
        try sorter.forEachSorted { entry in
            if let earlier = first, earlier.sameKey(as: entry) {
                found.append((earlier.position, entry.position))
            } else {
                first = entry
            }
        }
        sorter.reset()
        return found.sorted { $0.again < $1.again }
    }
}
