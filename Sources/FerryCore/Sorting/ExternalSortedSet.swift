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
    /// One block read by ``contains(_:)``.
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
        var last: Element?
        var count = 0
        if !sorter.spilled, sorter.buffered <= memoryLimit / MemoryLayout<Element>.stride {
            var values: [Element] = []
            try sorter.forEachSorted { value in
                if value == last { return try repeated(value) }
                last = value
                values.append(value)
            }
            self.count = values.count
            storage = .memory(values)
            return
        }
        let directory = try TemporaryDirectory(prefix: prefix, parent: temporaryDirectory)
        let path = directory.file("set")
        let output = try OutputFile(path: path, exclusive: true, bufferSize: 1 << 16)
        var index: [Element] = []
        let blockLength = Self.blockLength
        // Written from an array, so each value takes its stride (what reading expects), padding included.
        var pending: [Element] = []
        pending.reserveCapacity(blockLength * 16)
        try sorter.forEachSorted { value in
            if value == last { return try repeated(value) }
            last = value
            if count % blockLength == 0 { index.append(value) }
            count += 1
            pending.append(value)
            if pending.count == pending.capacity {
                try pending.withUnsafeBytes { try output.write($0) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        try pending.withUnsafeBytes { try output.write($0) }
        try output.close()
        self.count = count
        storage = .file(try InputFile(path: path), index: index, directory: directory)
    }

    /// Whether the set holds a value.
    /// - Throws: ``CoreError`` when the scratch file cannot be read.
    public func contains(_ value: Element) throws -> Bool {
        switch storage {
        case .memory(let values):
            return Self.position(of: value, in: values[...]) != nil
        case .file(let file, let index, _):
            // The last block that starts at or before the value.
            var low = 0
            var high = index.count
            while low < high {
                let middle = (low + high) / 2
                if index[middle] <= value { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return false }
            try read(block: low - 1, of: file)
            return Self.position(of: value, in: block[...]) != nil
        }
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
            var low = 0
            var high = index.count
            while low < high {
                let middle = (low + high) / 2
                if index[middle] <= probe { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return index.first }
            try read(block: low - 1, of: file)
            let position = Self.lowerBound(of: probe, in: block[...])
            if position < block.endIndex { return block[position] }
            // Past the block's last value: the next block's first, if there is one.
            return low < index.count ? index[low] : nil
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
        block = try Self.read(length, from: file, at: Int64(number * Self.blockLength * stride))
    }

    /// Reads `length` values at `offset`.
    fileprivate static func read(_ length: Int, from file: InputFile, at offset: Int64) throws -> [Element] {
        guard length > 0 else { return [] }
        return try [Element](unsafeUninitializedCapacity: length) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            let read = try file.read(into: bytes, at: offset)
            guard read == bytes.count else {
                throw CoreError(.readFailed, "\(file.path): a scratch set of sorted values is shorter than written")
            }
            initialized = length
        }
    }

    private static func position(of value: Element, in values: ArraySlice<Element>) -> Int? {
        let low = lowerBound(of: value, in: values)
        return low < values.endIndex && values[low] == value ? low : nil
    }

    /// The position of the first value not less than `value` (the end if there is none).
    private static func lowerBound(of value: Element, in values: ArraySlice<Element>) -> Int {
        var low = values.startIndex
        var high = values.endIndex
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
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
