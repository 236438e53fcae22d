import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sorts byte records of any length in bounded memory, ordered byte by byte (a record before a longer one it begins).
///
/// The variable-length sibling of ``ExternalSorter``: for values with names in them (record types, zones, paths),
/// encoded with ``ByteRecordWriter`` so that their bytes order as the values should. Records are gathered in one
/// buffer; a full buffer is sorted and written to a scratch file as a run, and ``forEachSorted(_:)`` merges the runs.
///
/// ```swift
/// let sorter = ExternalByteSorter(prefix: "ferry-files", temporaryDirectory: nil)
/// try sorter.append(record.bytes)
/// try sorter.forEachSorted { bytes in var reader = ByteRecordReader(bytes); … }
/// ```
public final class ExternalByteSorter {
    /// The number of records appended.
    public private(set) var count = 0
    private var arena: [UInt8] = []
    /// Where each buffered record is in ``arena``.
    private var records: [(offset: Int, length: Int)] = []
    private var isSorted = true
    private let memoryLimit: Int
    private let prefix: String
    private let parent: String?
    private var directory: TemporaryDirectory?
    private var runs: [String] = []

    /// A sorter that keeps about `memoryLimit` bytes of records (and 16 bytes more for each) in memory.
    /// - Parameters:
    ///   - prefix: the name of the scratch directory, which says what the runs hold.
    ///   - temporaryDirectory: where runs go when the records do not fit (default `$TMPDIR`).
    public init(memoryLimit: Int = 8 << 20, prefix: String, temporaryDirectory: String?) {
        self.memoryLimit = max(1 << 12, memoryLimit)
        self.prefix = prefix
        parent = temporaryDirectory
    }

    /// Whether some records went to scratch files.
    public var spilled: Bool { !runs.isEmpty }

    /// Adds a record.
    /// - Throws: ``CoreError`` when a run cannot be written.
    package func append(_ record: UnsafeRawBufferPointer) throws {
        if !records.isEmpty, arena.count + record.count + (records.count + 1) * 16 > memoryLimit { try spill() }
        records.append((arena.count, record.count))
        arena.append(contentsOf: record)
        isSorted = false
        count += 1
    }

    /// Adds a record.
    public func append(_ record: [UInt8]) throws {
        try record.withUnsafeBytes { try append($0) }
    }

    /// Visits every record in ascending order (equal records in no particular order), each valid only during its call;
    /// may be called again, and records may be appended between calls.
    /// - Throws: ``CoreError`` when a run cannot be written or read back, or what `visit` throws.
    package func forEachSorted(_ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard runs.isEmpty else {
            try spill()
            return try merge(visit)
        }
        sortBuffer()
        try arena.withUnsafeBytes { arena in
            for record in records { try visit(UnsafeRawBufferPointer(rebasing: arena[record.offset..<record.offset + record.length])) }
        }
    }

    /// Forgets every record and removes the runs.
    public func reset() {
        arena = []
        records = []
        isSorted = true
        runs = []
        directory = nil
        count = 0
    }

    /// Whether `lhs` orders before `rhs`: byte by byte, then by length.
    package static func precedes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        let common = min(lhs.count, rhs.count)
        if common > 0, let left = lhs.baseAddress, let right = rhs.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return order < 0 }
        }
        return lhs.count < rhs.count
    }

    private func sortBuffer() {
        guard !isSorted else { return }
        arena.withUnsafeBytes { arena in
            records.sort { a, b in
                Self.precedes(
                    UnsafeRawBufferPointer(rebasing: arena[a.offset..<a.offset + a.length]),
                    UnsafeRawBufferPointer(rebasing: arena[b.offset..<b.offset + b.length]))
            }
        }
        isSorted = true
    }

    /// Sorts the buffer and writes it as a run.
    private func spill() throws {
        guard !records.isEmpty else { return }
        sortBuffer()
        let scratch = try directory ?? TemporaryDirectory(prefix: prefix, parent: parent)
        directory = scratch
        let run = try ByteRecordFile(path: scratch.file("run-\(runs.count)"))
        try arena.withUnsafeBytes { arena in
            for record in records { try run.append(UnsafeRawBufferPointer(rebasing: arena[record.offset..<record.offset + record.length])) }
        }
        try run.finish()
        runs.append(run.path)
        arena.removeAll(keepingCapacity: true)
        records.removeAll(keepingCapacity: true)
    }

    /// Visits the records of every run in order (a k-way merge through a heap of the runs' heads, as
    /// ``ExternalSorter`` merges; each run is read through a small buffer).
    private func merge(_ visit: (UnsafeRawBufferPointer) throws -> Void) throws {
        let readers = try runs.map { try ByteRecordFile.Reader(path: $0) }
        var heap = MergeHeap<Head, Int>()
        for (index, reader) in readers.enumerated() {
            if let record = try reader.next() { heap.insert(Head(bytes: record), index) }
        }
        while let (head, reader) = heap.top {
            try visit(head.bytes)
            if let next = try readers[reader].next() {
                heap.replaceTop(Head(bytes: next))
            } else {
                heap.removeTop()
            }
        }
    }

    /// A run's next record, ordered as the sorter orders records (``precedes(_:_:)``).
    private struct Head: Comparable {
        var bytes: UnsafeRawBufferPointer

        static func < (lhs: Head, rhs: Head) -> Bool { ExternalByteSorter.precedes(lhs.bytes, rhs.bytes) }
        static func == (lhs: Head, rhs: Head) -> Bool { !(lhs < rhs) && !(rhs < lhs) }
    }
}
