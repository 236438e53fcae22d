import FerryCore

/// A set of plain values, sorted and without repeats, in memory while small and in one scratch file beyond.
///
/// A spilled set keeps only the first value of each 4 KiB block of its file in memory, so a lookup is a binary search
/// there and one read; memory stays bounded whatever the number of values (a bundle may list millions of assets).
/// Values are stored as their raw bytes, like ``ExternalSorter``'s. Not for use from several threads at once.
///
/// ```swift
/// let sorter = ExternalSorter<SHA256Digest>(prefix: "ferry-assets", temporaryDirectory: nil)
/// for digest in listed { try sorter.append(digest) }
/// let set = try ExternalSortedSet(taking: sorter, prefix: "ferry-assets", temporaryDirectory: nil) { twice in … }
/// if try set.contains(digest) { … }
/// ```
public final class ExternalSortedSet<Element: BitwiseCopyable & Comparable> {
    /// The number of distinct values.
    public let count: Int
    private let storage: Storage
    /// The block ``first(notBelow:)`` read last.
    private var block: [Element] = []

    private enum Storage {
        case memory([Element])
        /// The file's values, and the first value of each block of ``ExternalSortedSet/blockLength`` values.
        case file(InputFile, index: [Element], directory: TemporaryDirectory)
    }

    /// Values per block of a spilled set's file (4 KiB).
    static var blockLength: Int { max(1, 4096 / MemoryLayout<Element>.stride) }

    /// An empty set.
    public init() {
        count = 0
        storage = .memory([])
    }

    /// Takes the distinct values of a sorter, which is then reset.
    /// - Parameters:
    ///   - sorter: the values; if they did not leave its memory and take at most `memoryLimit` bytes, they stay in
    ///     memory here.
    ///   - prefix: the scratch directory's name, when the values go to a file.
    ///   - temporaryDirectory: where that directory goes (default `$TMPDIR`).
    ///   - memoryLimit: the most bytes of values kept in memory.
    ///   - repeated: called with each value once for every time it occurs again, in ascending order.
    /// - Throws: ``CoreError`` when the scratch file cannot be written, or what `repeated` throws.
    public init(
        taking sorter: ExternalSorter<Element>, prefix: String, temporaryDirectory: String?, memoryLimit: Int = .max,
        repeated: (Element) throws -> Void = { _ in }
    ) throws {
        defer { sorter.reset() }
        let inMemory = !sorter.spilled && sorter.buffered <= memoryLimit / MemoryLayout<Element>.stride
        var writer = try Writer(file: inMemory ? nil : TemporaryDirectory(prefix: prefix, parent: temporaryDirectory))
        var last: Element?
        try sorter.forEachSorted { value in
            if value == last { return try repeated(value) }
            last = value
            try writer.append(value)
        }
        (count, storage) = try writer.finish()
    }

    /// Values already sorted and distinct, in a scratch file.
    /// - Throws: ``CoreError`` when the scratch file cannot be written.
    public init(sortedDistinct values: some Sequence<Element>, prefix: String, temporaryDirectory: String?) throws {
        var writer = try Writer(file: TemporaryDirectory(prefix: prefix, parent: temporaryDirectory))
        for value in values { try writer.append(value) }
        (count, storage) = try writer.finish()
    }

    /// The values of two sets, each once, in a scratch file.
    /// - Throws: ``CoreError`` when a scratch file cannot be read or written.
    public init(merging first: ExternalSortedSet, _ second: ExternalSortedSet, prefix: String, temporaryDirectory: String?) throws {
        var writer = try Writer(file: TemporaryDirectory(prefix: prefix, parent: temporaryDirectory))
        let left = first.makeCursor()
        let right = second.makeCursor()
        var (a, b) = (try left.next(), try right.next())
        merging: while true {
            let value: Element
            switch (a, b) {
            case (let x?, let y?): value = min(x, y)
            case (let x?, nil), (nil, let x?): value = x
            case (nil, nil): break merging
            }
            try writer.append(value)
            if a == value { a = try left.next() }
            if b == value { b = try right.next() }
        }
        (count, storage) = try writer.finish()
    }

    /// Values, sorted and distinct, written as they come: to an array, or to a file with its sparse index.
    private struct Writer {
        /// The values in memory, or those of the file's last block or so not yet written.
        var values: [Element] = []
        let file: (output: OutputFile, directory: TemporaryDirectory)?
        var index: [Element] = []
        var count = 0

        init(file directory: TemporaryDirectory?) throws {
            file = try directory.map { (try OutputFile(path: $0.file("set"), exclusive: true, bufferSize: 1 << 16), $0) }
            if file != nil { values.reserveCapacity(ExternalSortedSet.blockLength * 16) }
        }

        mutating func append(_ value: Element) throws {
            if let (output, _) = file {
                if count % ExternalSortedSet.blockLength == 0 { index.append(value) }
                // Written from an array, so each value takes its stride (what reading expects), padding included.
                if values.count == values.capacity {
                    try values.withUnsafeBytes { try output.write($0) }
                    values.removeAll(keepingCapacity: true)
                }
            }
            values.append(value)
            count += 1
        }

        func finish() throws -> (Int, Storage) {
            guard let (output, directory) = file else { return (count, .memory(values)) }
            try values.withUnsafeBytes { try output.write($0) }
            try output.close()
            return (count, .file(try InputFile(path: directory.file("set")), index: index, directory: directory))
        }
    }

    /// Whether the set holds a value.
    /// - Throws: ``CoreError`` when the scratch file cannot be read.
    public func contains(_ value: Element) throws -> Bool {
        try first(notBelow: value) == value
    }

    /// The smallest value not less than `probe`, if any: with values ordered by a key first, the first value of a key.
    /// - Throws: ``CoreError`` when the scratch file cannot be read.
    public func first(notBelow probe: Element) throws -> Element? {
        switch storage {
        case .memory(let values):
            let position = Self.lowerBound(of: probe, in: values[...])
            return position < values.endIndex ? values[position] : nil
        case .file(let file, let index, _):
            // The block holding it: the last that starts at or before the probe; or the first, if none does.
            let next = Self.lowerBound(of: probe, in: index[...], orEqual: true)
            guard next > 0 else { return index.first }
            try read(block: next - 1, of: file)
            let position = Self.lowerBound(of: probe, in: block[...])
            if position < block.endIndex { return block[position] }
            // Past the block's last value: the next block's first, if there is one.
            return next < index.count ? index[next] : nil
        }
    }

    /// Calls `body` with every value of this set that `other` lacks, in ascending order (walking both side by side).
    /// - Throws: ``CoreError`` when a scratch file cannot be read, or what `body` throws.
    public func forEach(notIn other: ExternalSortedSet, _ body: (Element) throws -> Void) throws {
        let cursor = makeCursor(notIn: other)
        while let value = try cursor.next() { try body(value) }
    }

    /// A cursor over the values of this set that `other` lacks (all of them when `other` is `nil`), in ascending order.
    public func makeCursor(notIn other: ExternalSortedSet?) -> DifferenceCursor {
        DifferenceCursor(values: makeCursor(), excluded: other?.makeCursor())
    }

    /// Reads a set's values that another set lacks, walking both side by side.
    public final class DifferenceCursor {
        private let values: Cursor
        private let excluded: Cursor?
        private var nextExcluded: Element?
        private var started = false

        fileprivate init(values: Cursor, excluded: Cursor?) {
            self.values = values
            self.excluded = excluded
        }

        /// The next value the other set lacks, or `nil` after the last.
        /// - Throws: ``CoreError`` when a scratch file cannot be read.
        public func next() throws -> Element? {
            if !started {
                started = true
                nextExcluded = try excluded?.next()
            }
            while let value = try values.next() {
                while let candidate = nextExcluded, candidate < value { nextExcluded = try excluded?.next() }
                if nextExcluded != value { return value }
            }
            return nil
        }
    }

    /// Calls `body` with every value in ascending order.
    /// - Throws: ``CoreError`` when the scratch file cannot be read, or what `body` throws.
    public func forEach(_ body: (Element) throws -> Void) throws {
        let cursor = makeCursor()
        while let value = try cursor.next() { try body(value) }
    }

    /// A cursor over the values in ascending order, for merging with another sorted stream.
    public func makeCursor() -> Cursor {
        switch storage {
        case .memory(let values): Cursor(values: values, file: nil)
        case .file(let file, _, _): Cursor(values: [], file: file)
        }
    }

    /// Reads one block of the file into ``block``.
    private func read(block number: Int, of file: InputFile) throws {
        let stride = MemoryLayout<Element>.stride
        let length = min(Self.blockLength, count - number * Self.blockLength)
        block = try [Element](unsafeUninitializedCapacity: length) { buffer, initialized in
            try file.read(exactly: UnsafeMutableRawBufferPointer(buffer), at: Int64(number * Self.blockLength * stride))
            initialized = length
        }
    }

    /// The position of the first value not less than `value` (or, `orEqual`, greater than it); the end if none is.
    private static func lowerBound(of value: Element, in values: ArraySlice<Element>, orEqual: Bool = false) -> Int {
        var low = values.startIndex
        var high = values.endIndex
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value || (orEqual && values[middle] == value) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Reads a set's values in ascending order, a block at a time.
    public final class Cursor {
        private var values: [Element]
        private var position = 0
        private let file: InputFile?
        private var offset: Int64 = 0

        fileprivate init(values: [Element], file: InputFile?) {
            self.values = values
            self.file = file
        }

        /// The next value, or `nil` after the last.
        /// - Throws: ``CoreError`` when the scratch file cannot be read.
        public func next() throws -> Element? {
            if position == values.count, let file {
                let stride = MemoryLayout<Element>.stride
                let bytes = try ExternalSortedSet.readChunk(from: file, at: offset, stride: stride)
                offset += Int64(bytes.count * stride)
                values = bytes
                position = 0
            }
            guard position < values.count else { return nil }
            defer { position += 1 }
            return values[position]
        }
    }

    /// Reads up to 64 KiB of whole values at `offset` (none at the end of the file).
    fileprivate static func readChunk(from file: InputFile, at offset: Int64, stride: Int) throws -> [Element] {
        let capacity = max(1, (64 << 10) / stride)
        return try [Element](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            let read = try file.read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            guard read % stride == 0 else {
                throw CoreError(.readFailed, "\(file.path): a scratch set of sorted values ends in the middle of a value")
            }
            initialized = read / stride
        }
    }
}
