import FerryCore

/// Finds the record keys that occur more than once in a stream of any length, in bounded memory.
///
/// A set of every key would grow with the stream (about 30 bytes a record: a 100 MB budget ends near three million
/// records). Instead keys are buffered with their positions; a full buffer is sorted and written to a scratch file as
/// a run, and ``duplicates()`` merges the runs, where repeated keys are neighbours. A stream that fits in the buffer
/// never touches the disk.
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
            (lhs.high, lhs.low, lhs.position) < (rhs.high, rhs.low, rhs.position)
        }

        func sameKey(as other: Entry) -> Bool { high == other.high && low == other.low }
    }

    private var buffer: [Entry] = []
    private let capacity: Int
    private let parent: String?
    private var directory: TemporaryDirectory?
    private var runs: [String] = []

    /// A finder that keeps at most `memoryLimit` bytes of keys in memory (24 bytes each; sorting a full buffer takes
    /// half as much again).
    /// - Parameter temporaryDirectory: where runs go when the keys do not fit (default `$TMPDIR`).
    public init(memoryLimit: Int = 8 << 20, temporaryDirectory: String?) {
        capacity = max(1024, memoryLimit / MemoryLayout<Entry>.stride)
        parent = temporaryDirectory
    }

    /// Notes a key at a position; positions must increase from call to call.
    /// - Throws: ``CoreError`` when a run cannot be written.
    public func insert(_ key: RecordKey, at position: Int64) throws {
        if buffer.count == capacity { try spill() }
        // The whole buffer at once (pages are only committed as they fill): growing by doubling would hold the old
        // and the new copy at the same time.
        if buffer.capacity == 0 { buffer.reserveCapacity(capacity) }
        buffer.append(Entry(high: key.words.high, low: key.words.low, position: position))
    }

    /// Every later occurrence of a key, with its first occurrence, ordered by the later position.
    /// - Throws: ``CoreError`` when a run cannot be read back.
    public func duplicates() throws -> [(first: Int64, again: Int64)] {
        var found: [(first: Int64, again: Int64)] = []
        var first: Entry?
        func visit(_ entry: Entry) {
            if let earlier = first, earlier.sameKey(as: entry) {
                found.append((earlier.position, entry.position))
            } else {
                first = entry
            }
        }
        if runs.isEmpty {
            buffer.sort()
            buffer.forEach(visit)
        } else {
            try spill()
            try merge(visit)
        }
        buffer = []
        return found.sorted { $0.again < $1.again }
    }

    /// Sorts the buffer and writes it as a run.
    private func spill() throws {
        guard !buffer.isEmpty else { return }
        buffer.sort()
        let scratch = try directory ?? TemporaryDirectory(prefix: "ferry-keys", parent: parent)
        directory = scratch
        let path = scratch.file("run-\(runs.count)")
        let file = try OutputFile(path: path, exclusive: true, bufferSize: 1 << 20)
        try buffer.withUnsafeBytes { try file.write($0) }
        try file.close()
        runs.append(path)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Visits the entries of every run in order (a k-way merge; each run is read through a small buffer).
    private func merge(_ visit: (Entry) -> Void) throws {
        var readers = try runs.map { try RunReader(path: $0) }
        var heads: [(entry: Entry, run: Int)] = []
        for index in readers.indices {
            if let entry = try readers[index].next() { heads.append((entry, index)) }
        }
        // Few runs (one per buffer of keys): a linear search for the smallest head is enough.
        while let smallest = heads.indices.min(by: { heads[$0].entry < heads[$1].entry }) {
            let (entry, run) = heads[smallest]
            visit(entry)
            if let next = try readers[run].next() {
                heads[smallest] = (next, run)
            } else {
                heads.remove(at: smallest)
            }
        }
    }

    /// Reads one run's entries back, a block at a time.
    private struct RunReader {
        let file: InputFile
        var block: [Entry] = Array(repeating: Entry(high: 0, low: 0, position: 0), count: 4096)
        var count = 0
        var index = 0

        init(path: String) throws { file = try InputFile(path: path) }

        mutating func next() throws -> Entry? {
            if index == count {
                let stride = MemoryLayout<Entry>.stride
                let bytes = try block.withUnsafeMutableBytes { buffer -> Int in
                    var filled = 0
                    while filled < buffer.count {
                        let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                        if read == 0 { break }
                        filled += read
                    }
                    return filled
                }
                guard bytes % stride == 0 else {
                    throw CoreError(.readFailed, "\(file.path): a scratch run of record keys ends in the middle of a key")
                }
                count = bytes / stride
                index = 0
                if count == 0 { return nil }
            }
            defer { index += 1 }
            return block[index]
        }
    }
}
