import FerryCore

/// A scratch file of byte records written one after the other and read back in the same order, any number of times.
///
/// Each record is its length (4 bytes, little-endian) and its bytes. What is written is only readable once
/// ``finish()`` has flushed it.
public final class ByteRecordFile {
    /// The number of records.
    public private(set) var count = 0
    /// The file's path.
    public let path: String
    private var output: OutputFile?

    /// Creates an empty file at `path` (which must not exist).
    /// - Throws: ``CoreError`` when it cannot be created.
    public init(path: String) throws {
        self.path = path
        output = try OutputFile(path: path, exclusive: true, bufferSize: 1 << 16)
    }

    /// Appends a record.
    /// - Throws: ``CoreError`` when it cannot be written, or after ``finish()``.
    package func append(_ record: UnsafeRawBufferPointer) throws {
        guard let output else { throw CoreError(.writeFailed, "\(path): a scratch file was written after it was finished") }
        var length = UInt32(record.count).littleEndian
        try withUnsafeBytes(of: &length) { try output.write($0) }
        try output.write(record)
        count += 1
    }

    /// Appends a record.
    public func append(_ record: [UInt8]) throws {
        try record.withUnsafeBytes { try append($0) }
    }

    /// Flushes and closes the file for writing; records may be read from now on.
    public func finish() throws {
        try output?.close()
        output = nil
    }

    /// Calls `body` with each record in the order written (valid only during the call).
    /// - Throws: ``CoreError`` when the file cannot be read or ends inside a record, or what `body` throws.
    package func forEach(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try finish()
        let reader = try Reader(path: path)
        while let record = try reader.next() { try body(record) }
    }

    /// Reads length-prefixed records from a file through a buffer that grows to the longest record.
    public final class Reader {
        private let file: InputFile
        private var buffer: UnsafeMutableRawBufferPointer
        private var start = 0
        private var end = 0

        /// Opens a file of records.
        public init(path: String) throws {
            file = try InputFile(path: path)
            buffer = .allocate(byteCount: 64 << 10, alignment: 8)
        }

        deinit { buffer.deallocate() }

        /// The next record, valid until the next call; `nil` at the end of the file.
        package func next() throws -> UnsafeRawBufferPointer? {
            guard try fill(4) else { return nil }
            var length: UInt32 = 0
            withUnsafeMutableBytes(of: &length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<start + 4])) }
            let count = Int(UInt32(littleEndian: length))
            guard try fill(4 + count) else {
                throw CoreError(.readFailed, "\(file.path): a scratch file ends inside a record of \(count) bytes")
            }
            defer { start += 4 + count }
            return UnsafeRawBufferPointer(rebasing: buffer[start + 4..<start + 4 + count])
        }

        /// Makes `count` bytes available from `start`; `false` at a clean end of file (no byte left at all).
        private func fill(_ count: Int) throws -> Bool {
            if end - start >= count { return true }
            if count > buffer.count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, buffer.count * 2), alignment: 8)
                larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
                buffer.deallocate()
                buffer = larger
            } else if start > 0 {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            }
            end -= start
            start = 0
            while end < count {
                let read = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
                if read == 0 {
                    if end == 0 { return false }
                    throw CoreError(.readFailed, "\(file.path): a scratch file ends inside a record")
                }
                end += read
            }
            return true
        }
    }
}
