import FerryCore

/// Entries of a key and a value, both bytes of any length, sorted by key with each key once, and found by key: in
/// memory while small, in one scratch file beyond.
///
/// The keyed sibling of ``ExternalSortedSet``, for what is known about names such as paths. A table in a file keeps
/// only the first key of each block of about ``blockBytes`` in memory, so a lookup is a binary search there and one
/// read; memory stays bounded whatever the number of entries. The block read last is kept, so lookups that come in
/// about key order cost one read per block. Keys order byte by byte (as ``ExternalByteSorter`` orders records).
///
/// Each entry also has a *rank*, its position in key order, for a caller that marks entries in a bit set. Not for use
/// from several threads at once.
///
/// ```swift
/// var builder = SortedByteTable.Builder(prefix: "ferry-paths", temporaryDirectory: nil)
/// try builder.append(key: Array(path.utf8), value: digestBytes)   // keys in ascending order
/// let table = try builder.finish()
/// try table.find(Array(path.utf8)) { rank, value in … }
/// ```
public final class SortedByteTable {
    /// The number of entries.
    public let count: Int
    private let storage: Storage
    /// The block a lookup read last, and its number.
    private var cached: (number: Int, block: Block)?

    fileprivate enum Storage {
        case memory(Block)
        /// The file, and for each block: its first key, where it starts, and the rank of its first entry.
        case file(InputFile, index: [IndexEntry], end: Int64, directory: TemporaryDirectory)
    }

    fileprivate struct IndexEntry {
        var firstKey: [UInt8]
        var offset: Int64
        var rank: Int
    }

    /// Bytes of entries per block of a table in a file.
    static let blockBytes = 8 << 10

    /// Calls `body` with the rank and the value of the entry with this key, if there is one.
    ///
    /// Returns what `body` returns, or `nil` without such an entry. The value is valid only during the call.
    /// - Throws: ``CoreError`` when the scratch file cannot be read, or what `body` throws.
    public func find<Result>(
        _ key: UnsafeRawBufferPointer, _ body: (_ rank: Int, _ value: UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        let (block, firstRank): (Block, Int)
        switch storage {
        case .memory(let all):
            (block, firstRank) = (all, 0)
        case .file(let file, let index, let end, _):
            // The block holding it: the last that starts at or before the key.
            var low = 0
            var high = index.count
            while low < high {
                let middle = (low + high) / 2
                let starts = index[middle].firstKey.withUnsafeBytes { !ExternalByteSorter.precedes(key, $0) }
                if starts { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let number = low - 1
            if cached?.number != number {
                cached = (number, try Self.readBlock(number, of: file, index: index, end: end))
            }
            guard let current = cached?.block else { return nil }
            (block, firstRank) = (current, index[number].rank)
        }
        guard let position = block.position(of: key) else { return nil }
        return try block.withValue(at: position) { try body(firstRank + position, $0) }
    }

    /// Calls ``find(_:_:)`` with the bytes of `key`, in place when they are contiguous (a native string's UTF-8 is).
    public func find<Result>(
        _ key: some Collection<UInt8>, _ body: (_ rank: Int, _ value: UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        if let found = try key.withContiguousStorageIfAvailable({ try find(UnsafeRawBufferPointer($0), body) }) { return found }
        return try Array(key).withUnsafeBytes { try find($0, body) }
    }

    /// Calls `body` with every entry's rank, key and value in key order (each valid only during its call).
    /// - Throws: ``CoreError`` when the scratch file cannot be read, or what `body` throws.
    package func forEach(_ body: (_ rank: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws {
        switch storage {
        case .memory(let block):
            try block.forEach { try body($0, $1, $2) }
        case .file(let file, let index, let end, _):
            for number in index.indices {
                let block = try Self.readBlock(number, of: file, index: index, end: end)
                try block.forEach { try body(index[number].rank + $0, $1, $2) }
            }
        }
    }

    /// A cursor over the entries in key order, for merging with another sorted stream.
    public func makeCursor() -> Cursor { Cursor(table: self) }

    /// Reads a table's entries in key order, a block at a time.
    public final class Cursor {
        private let table: SortedByteTable
        private var block: Block?
        private var blockNumber = -1
        private var position = 0
        private var key: [UInt8] = []
        private var value: [UInt8] = []

        fileprivate init(table: SortedByteTable) { self.table = table }

        /// Moves to the next entry; `false` after the last.
        /// - Throws: ``CoreError`` when the scratch file cannot be read.
        public func next() throws -> Bool {
            while block.map({ position >= $0.count }) ?? true {
                blockNumber += 1
                position = 0
                switch table.storage {
                case .memory(let all):
                    guard blockNumber == 0 else { return false }
                    block = all
                case .file(let file, let index, let end, _):
                    guard blockNumber < index.count else { return false }
                    block = try SortedByteTable.readBlock(blockNumber, of: file, index: index, end: end)
                }
            }
            guard let block else { return false }
            key = block.key(at: position)
            block.withValue(at: position) { value = Array($0) }
            position += 1
            return true
        }

        /// The current entry's key.
        public var currentKey: [UInt8] { key }
        /// The current entry's value.
        public var currentValue: [UInt8] { value }
    }

    /// Reads one block of a table's file.
    private static func readBlock(_ number: Int, of file: InputFile, index: [IndexEntry], end: Int64) throws -> Block {
        let start = index[number].offset
        let stop = number + 1 < index.count ? index[number + 1].offset : end
        var bytes = [UInt8](repeating: 0, count: Int(stop - start))
        try bytes.withUnsafeMutableBytes { try file.read(exactly: $0, at: start) }
        return try Block(encoded: bytes, path: file.path)
    }

    fileprivate init(count: Int, storage: Storage) {
        self.count = count
        self.storage = storage
    }
}

extension SortedByteTable {
    /// Takes the records of a sorter, each split into a key and a value, keeping the first of each key; the sorter is
    /// then reset.
    /// - Parameters:
    ///   - sorter: the records, which must order as their keys do.
    ///   - prefix: the scratch directory's name, when the table goes to a file.
    ///   - temporaryDirectory: where that directory goes (default `$TMPDIR`).
    ///   - memoryLimit: about the most bytes of entries kept in memory.
    ///   - split: a record's key and value.
    ///   - repeated: called with the key of each record whose key occurs again.
    /// - Throws: ``CoreError`` when a scratch file cannot be written or read, or what `split` or `repeated` throws.
    public convenience init(
        taking sorter: ExternalByteSorter, prefix: String, temporaryDirectory: String?, memoryLimit: Int = 1 << 20,
        split: (UnsafeRawBufferPointer) throws -> (key: [UInt8], value: UnsafeRawBufferPointer),
        repeated: ([UInt8]) throws -> Void = { _ in }
    ) throws {
        defer { sorter.reset() }
        var builder = Builder(prefix: prefix, temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
        var last: [UInt8]?
        try sorter.forEachSorted { record in
            let (key, value) = try split(record)
            if key == last { return try repeated(key) }
            last = key
            try key.withUnsafeBytes { try builder.append(key: $0, value: value) }
        }
        let table = try builder.finish()
        self.init(count: table.count, storage: table.storage)
    }

    /// Gathers entries in ascending key order, moving them to a scratch file past a memory limit.
    public struct Builder {
        private var block = Block()
        private var lastKey: [UInt8]?
        private var count = 0
        private let memoryLimit: Int
        private let prefix: String
        private let parent: String?
        private var file: (output: OutputFile, directory: TemporaryDirectory)?
        private var index: [IndexEntry] = []
        private var offset: Int64 = 0

        /// A builder keeping about `memoryLimit` bytes of entries in memory, the rest in a scratch directory named
        /// `prefix` under `temporaryDirectory` (default `$TMPDIR`).
        public init(prefix: String, temporaryDirectory: String?, memoryLimit: Int = 1 << 20) {
            self.prefix = prefix
            parent = temporaryDirectory
            self.memoryLimit = memoryLimit
        }

        /// Adds the next entry, whose key must order after the last one's.
        /// - Throws: ``CoreError`` for a key out of order or when the scratch file cannot be written.
        package mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
            if let lastKey {
                guard lastKey.withUnsafeBytes({ ExternalByteSorter.precedes($0, key) }) else {
                    throw CoreError(.writeFailed, "a sorted scratch table was given keys out of order or twice")
                }
            }
            lastKey = Array(key)
            if file == nil, block.byteCount + key.count + value.count > memoryLimit {
                let directory = try TemporaryDirectory(prefix: prefix, parent: parent)
                file = (try OutputFile(path: directory.file("table"), exclusive: true, bufferSize: 1 << 16), directory)
                try flushBlock()
            } else if file != nil, block.byteCount >= SortedByteTable.blockBytes {
                try flushBlock()
            }
            block.append(key: key, value: value)
            count += 1
        }

        /// Adds the next entry.
        public mutating func append(key: [UInt8], value: [UInt8]) throws {
            try key.withUnsafeBytes { key in try value.withUnsafeBytes { try append(key: key, value: $0) } }
        }

        /// Writes the entries gathered to the file, as blocks of about ``SortedByteTable/blockBytes``.
        private mutating func flushBlock() throws {
            guard let (output, _) = file else { return }
            var start = 0
            while start < block.count {
                var stop = start
                var bytes = 0
                while stop < block.count, bytes < SortedByteTable.blockBytes {
                    bytes += block.encodedSize(at: stop)
                    stop += 1
                }
                index.append(IndexEntry(firstKey: block.key(at: start), offset: offset, rank: count - block.count + start))
                let encoded = block.encode(start..<stop)
                try output.write(encoded)
                offset += Int64(encoded.count)
                start = stop
            }
            block = Block()
        }

        /// The table.
        /// - Throws: ``CoreError`` when the scratch file cannot be written or opened again.
        public mutating func finish() throws -> SortedByteTable {
            guard let (output, directory) = file else { return SortedByteTable(count: count, storage: .memory(block)) }
            try flushBlock()
            try output.close()
            file = nil
            let input = try InputFile(path: directory.file("table"))
            return SortedByteTable(count: count, storage: .file(input, index: index, end: offset, directory: directory))
        }
    }

    /// Entries in key order in one buffer: a whole table in memory, or one block of a table in a file.
    ///
    /// Encoded in a file as, for each entry, the key's and the value's lengths (4 bytes each, little-endian), then
    /// the key and the value.
    fileprivate struct Block {
        private var bytes: [UInt8] = []
        /// Where each entry's key starts, its length, and its value's length (the value follows the key).
        private var entries: [(start: Int, keyLength: Int, valueLength: Int)] = []

        init() {}

        /// Decodes the encoded entries of one block.
        init(encoded: [UInt8], path: String) throws {
            bytes = encoded
            var offset = 0
            func length(at position: Int) -> Int {
                Int(encoded[position]) | Int(encoded[position + 1]) << 8 | Int(encoded[position + 2]) << 16 | Int(encoded[position + 3]) << 24
            }
            while offset < encoded.count {
                guard encoded.count - offset >= 8 else { throw Self.damaged(path) }
                let keyLength = length(at: offset)
                let valueLength = length(at: offset + 4)
                guard encoded.count - offset - 8 >= keyLength + valueLength else { throw Self.damaged(path) }
                entries.append((offset + 8, keyLength, valueLength))
                offset += 8 + keyLength + valueLength
            }
        }

        private static func damaged(_ path: String) -> CoreError {
            CoreError(.readFailed, "\(path): a sorted scratch table ends inside an entry")
        }

        var count: Int { entries.count }
        var byteCount: Int { bytes.count }

        mutating func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            entries.append((bytes.count, key.count, value.count))
            bytes.append(contentsOf: key)
            bytes.append(contentsOf: value)
        }

        func key(at position: Int) -> [UInt8] {
            let entry = entries[position]
            return Array(bytes[entry.start..<entry.start + entry.keyLength])
        }

        func withValue<Result>(at position: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            let entry = entries[position]
            let start = entry.start + entry.keyLength
            return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<start + entry.valueLength])) }
        }

        func encodedSize(at position: Int) -> Int { 8 + entries[position].keyLength + entries[position].valueLength }

        /// The position of the entry with this key, if any.
        func position(of key: UnsafeRawBufferPointer) -> Int? {
            bytes.withUnsafeBytes { all in
                var low = 0
                var high = entries.count
                while low < high {
                    let middle = (low + high) / 2
                    let entry = entries[middle]
                    let candidate = UnsafeRawBufferPointer(rebasing: all[entry.start..<entry.start + entry.keyLength])
                    if ExternalByteSorter.precedes(candidate, key) {
                        low = middle + 1
                    } else {
                        high = middle
                    }
                }
                guard low < entries.count else { return nil }
                let entry = entries[low]
                return UnsafeRawBufferPointer(rebasing: all[entry.start..<entry.start + entry.keyLength]).elementsEqual(key) ? low : nil
            }
        }

        func forEach(_ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
            try bytes.withUnsafeBytes { all in
                for (position, entry) in entries.enumerated() {
                    let valueStart = entry.start + entry.keyLength
                    try body(
                        position, UnsafeRawBufferPointer(rebasing: all[entry.start..<valueStart]),
                        UnsafeRawBufferPointer(rebasing: all[valueStart..<valueStart + entry.valueLength]))
                }
            }
        }

        /// The encoding of some entries.
        func encode(_ positions: Range<Int>) -> [UInt8] {
            var encoded: [UInt8] = []
            for position in positions {
                let entry = entries[position]
                for length in [entry.keyLength, entry.valueLength] {
                    withUnsafeBytes(of: UInt32(length).littleEndian) { encoded.append(contentsOf: $0) }
                }
                encoded.append(contentsOf: bytes[entry.start..<entry.start + entry.keyLength + entry.valueLength])
            }
            return encoded
        }
    }
}
