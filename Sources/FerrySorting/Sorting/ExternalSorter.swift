import FerryCore

/// Sorts a stream of fixed-size values of any length in bounded memory.
///
/// Values are buffered; a full buffer is sorted and written to a scratch file as a run, and ``forEachSorted(_:)``
/// merges the runs. A stream that fits in the buffer never touches the disk. Values are written as their raw bytes,
/// so they must be plain data (no references), and runs are only meaningful to the process that wrote them. Not for
/// use from several threads at once.
///
/// ```swift
/// let sorter = ExternalSorter<Entry>(memoryLimit: 8 << 20, prefix: "ferry-keys", temporaryDirectory: nil)
/// for entry in entries { try sorter.append(entry) }
/// try sorter.forEachSorted { entry in visit(entry) }
/// ```
public final class ExternalSorter<Element: BitwiseCopyable & Comparable> {
    // Unchecked: a sorter is used from one thread at a time, and checking every access to these two cost
    // four dynamic checks per value appended (the bundle writer's ledger appends over a million, on the thread the
    // run waits for).
    @exclusivity(unchecked) @usableFromInline var buffer: [Element] = []
    @usableFromInline let capacity: Int
    @usableFromInline let prefix: String
    @usableFromInline let parent: String?
    @usableFromInline var directory: TemporaryDirectory?
    @usableFromInline var runs: [String] = []
    @exclusivity(unchecked) @usableFromInline var isSorted = true
    /// The values' leading 64 bits of order, when they have them (``init(memoryLimit:prefix:temporaryDirectory:sortPrefix:)``).
    @usableFromInline let sortPrefix: ((Element) -> UInt64)?

    /// A sorter that keeps at most `memoryLimit` bytes of values in memory.
    /// - Parameters:
    ///   - prefix: the name of the scratch directory, which says what the runs hold.
    ///   - temporaryDirectory: where runs go when the values do not fit (default `$TMPDIR`).
    ///   - sortPrefix: for values whose order begins with a well-spread 64-bit number (a hash): that number, so that
    ///     `a < b` implies `sortPrefix(a) <= sortPrefix(b)`. Values are then sorted by distributing them on its top
    ///     bits first (``PrefixBucketSort``), a few times faster than comparing; the buffer takes twice the memory.
    @inlinable
    public init(memoryLimit: Int = 8 << 20, prefix: String, temporaryDirectory: String?, sortPrefix: ((Element) -> UInt64)? = nil) {
        let count = max(64, memoryLimit / MemoryLayout<Element>.stride)
        capacity = sortPrefix == nil ? count : max(64, count / 2)
        self.prefix = prefix
        parent = temporaryDirectory
        self.sortPrefix = sortPrefix
    }

    /// Sorts the buffer, by its values' prefixes first when they have them.
    @inlinable
    func sortBuffer() {
        if let sortPrefix {
            PrefixBucketSort.sort(&buffer, prefix: sortPrefix)
        } else {
            buffer.sort()
        }
    }

    /// How many values are in memory (not yet in a scratch file).
    var buffered: Int { buffer.count }

    /// Whether some values went to scratch files.
    @inlinable
    public var spilled: Bool { !runs.isEmpty }

    /// Adds a value.
    /// - Throws: ``CoreError`` when a run cannot be written.
    @inlinable
    public func append(_ element: Element) throws {
        if buffer.count == capacity { try spill() }
        // The whole buffer at once (pages are only committed as they fill): growing by doubling would hold the old
        // and the new copy at the same time.
        if buffer.capacity == 0 { buffer.reserveCapacity(capacity) }
        buffer.append(element)
        isSorted = false
    }

    /// Visits every value in ascending order (equal values in no particular order); may be called again, and values
    /// may be appended between calls.
    /// - Throws: ``CoreError`` when a run cannot be written or read back, or what `visit` throws.
    @inlinable
    public func forEachSorted(_ visit: (Element) throws -> Void) throws {
        if runs.isEmpty {
            if !isSorted { sortBuffer() }
            isSorted = true
            for element in buffer { try visit(element) }
        } else {
            try spill()
            try merge(visit)
        }
    }

    /// Forgets every value and removes the runs.
    @inlinable
    public func reset() {
        buffer = []
        isSorted = true
        runs = []
        directory = nil
    }

    /// Sorts the buffer and writes it as a run.
    @inlinable
    func spill() throws {
        guard !buffer.isEmpty else { return }
        sortBuffer()
        let scratch = try directory ?? TemporaryDirectory(prefix: prefix, parent: parent)
        directory = scratch
        let path = scratch.file("run-\(runs.count)")
        let file = try OutputFile(path: path, exclusive: true, bufferSize: 1 << 20)
        try buffer.withUnsafeBytes { try file.write($0) }
        try file.close()
        runs.append(path)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Visits the values of every run in order (a k-way merge through a binary heap of the runs' heads; each run is
    /// read through a small buffer).
    @inlinable
    func merge(_ visit: (Element) throws -> Void) throws {
        // Cursors are values in one buffer, not objects: reading a class's counters once per value cost a dynamic
        // exclusivity check each, a fifth of the merge (the ledger's, 1.2 M values, on the thread a bundle waits for).
        var cursors: [RunCursor] = []
        defer { for cursor in cursors { cursor.block.deallocate() } }
        for run in runs { cursors.append(try RunCursor(path: run)) }
        try cursors.withUnsafeMutableBufferPointer { cursors in
            var heap = MergeHeap<Element, Int>()
            for index in cursors.indices {
                if let element = try cursors[index].next() { heap.insert(element, index) }
            }
            while let (element, index) = heap.top {
                try visit(element)
                if let next = try cursors[index].next() {
                    heap.replaceTop(next)
                } else {
                    heap.removeTop()
                }
            }
        }
    }

    /// Reads one run's values back, a block at a time.
    @usableFromInline
    struct RunCursor {
        @usableFromInline let file: InputFile
        /// Deallocated by the merge that made it.
        @usableFromInline let block: UnsafeMutableBufferPointer<Element>
        @usableFromInline var count = 0
        @usableFromInline var index = 0

        @inlinable
        init(path: String) throws {
            file = try InputFile(path: path)
            block = .allocate(capacity: max(1, (64 << 10) / MemoryLayout<Element>.stride))
        }

        @inlinable
        mutating func next() throws -> Element? {
            if index < count {
                defer { index += 1 }
                return block[index]
            }
            let stride = MemoryLayout<Element>.stride
            let filled = try file.read(filling: UnsafeMutableRawBufferPointer(block))
            guard filled % stride == 0 else {
                throw CoreError(.readFailed, "\(file.path): a scratch run of sorted values ends in the middle of a value")
            }
            count = filled / stride
            index = 0
            if count == 0 { return nil }
            index = 1
            return block[0]
        }
    }
}
