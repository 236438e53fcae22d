import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file line by line with a bounded buffer, for NDJSON inputs of any size.
///
/// Lines end at `\n`; a trailing `\r` is removed. A line longer than the limit is reported as too long and skipped,
/// so one bad line cannot exhaust memory. A UTF-8 byte order mark at the start of the file can be skipped (text
/// editors on Windows and some exporters write one; RFC 8259 §8.1 lets JSON readers ignore it).
public final class LineReader {
    /// Where a line was found.
    public struct Position: Sendable, Hashable {
        /// The 1-based line number.
        public var line: Int
        /// The byte offset of the line's first byte in the file.
        public var offset: Int64

        /// The position just past `bytes`, which start at this position: a part of a record's text found later.
        package func advanced(over bytes: UnsafeRawBufferPointer) -> Position {
            Position(line: line + bytes.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }, offset: offset + Int64(bytes.count))
        }
    }

    /// One line of input.
    public enum Line {
        /// A line's bytes (without the newline), valid only during the callback.
        case bytes(UnsafeRawBufferPointer, Position)
        /// A line longer than the limit; its bytes were skipped.
        case tooLong(Position, length: Int)
    }

    // Not private: ``nextRecordText()`` (in its own file) reads JSON documents through the same buffer.
    let file: InputFile
    /// The file's content when it is read decompressed.
    private let content: DecompressingInput?
    let maxLineLength: Int
    var buffer: UnsafeMutableRawBufferPointer
    var start = 0
    var end = 0
    var atEOF = false
    var lineNumber = 0
    var consumed: Int64 = 0
    /// Whether a byte order mark at the start is yet to be looked for.
    var looksForByteOrderMark: Bool
    /// How ``nextRecordText()`` cuts the file, once it has looked at its start.
    var recordLayout: RecordLayout?
    /// Where ``nextRecordText()`` is in a JSON document.
    var document = DocumentState()

    /// Opens a file for line reading.
    /// - Parameters:
    ///   - path: the file.
    ///   - maxLineLength: the longest line accepted, in bytes.
    ///   - skippingByteOrderMark: whether a UTF-8 byte order mark (`EF BB BF`) that starts the file is left out of
    ///     its first line (the line's offset then counts it).
    ///   - decompressing: whether a gzip or Zstandard file is read decompressed (``DecompressingInput``); positions
    ///     then count the decompressed bytes.
    public init(path: String, maxLineLength: Int = 64 << 20, skippingByteOrderMark: Bool = false, decompressing: Bool = false) throws {
        file = try InputFile(path: path)
        content = decompressing ? try DecompressingInput(file: file) : nil
        self.maxLineLength = maxLineLength
        looksForByteOrderMark = skippingByteOrderMark
        buffer = .allocate(byteCount: min(1 << 20, maxLineLength + 1), alignment: 16)
    }

    /// The path being read.
    public var path: String { file.path }

    deinit {
        buffer.deallocate()
    }

    /// The file's first bytes (up to `count`, fewer only when the file is shorter), without consuming them: for
    /// recognizing what a file is before reading it, standard input too.
    public func prefix(_ count: Int) throws -> [UInt8] {
        let wanted = min(count, maxLineLength)
        while end - start < wanted, !atEOF { try refill() }
        return Array(UnsafeRawBufferPointer(rebasing: buffer[start..<min(end, start + wanted)]))
    }

    /// Calls `body` for every line, in order.
    public func forEachLine(_ body: (Line) throws -> Void) throws {
        while let line = try nextLine() { try body(line) }
    }

    /// The next line, or `nil` at the end of the file; its bytes are valid until the next call.
    public func nextLine() throws -> Line? {
        if looksForByteOrderMark { try skipByteOrderMark() }
        while true {
            // Look for a newline in the buffered bytes.
            if let newline = findNewline(from: start) {
                var lineEnd = newline
                if lineEnd > start, buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                lineNumber += 1
                let position = Position(line: lineNumber, offset: consumed)
                let line = Line.bytes(UnsafeRawBufferPointer(rebasing: buffer[start..<lineEnd]), position)
                consumed += Int64(newline + 1 - start)
                start = newline + 1
                return line
            }
            if atEOF {
                guard end > start else { return nil }
                lineNumber += 1
                let position = Position(line: lineNumber, offset: consumed)
                var lineEnd = end
                if buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                let line = Line.bytes(UnsafeRawBufferPointer(rebasing: buffer[start..<lineEnd]), position)
                consumed += Int64(end - start)
                start = end
                return line
            }
            if end - start >= maxLineLength {
                lineNumber += 1
                let position = Position(line: lineNumber, offset: consumed)
                let length = try skipLongLine()
                return .tooLong(position, length: length)
            }
            try refill()
        }
    }

    /// Skips `EF BB BF` at the start of the file.
    func skipByteOrderMark() throws {
        looksForByteOrderMark = false
        while end - start < 3, !atEOF { try refill() }
        guard end - start >= 3, buffer[start] == 0xEF, buffer[start + 1] == 0xBB, buffer[start + 2] == 0xBF else { return }
        start += 3
        consumed += 3
    }

    func findNewline(from index: Int) -> Int? {
        guard end > index, let base = buffer.baseAddress else { return nil }
        guard let found = memchr(base + index, 0x0A, end - index) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// Moves pending bytes to the front, grows the buffer if it is full, and reads more.
    func refill() throws {
        if start > 0 {
            if end > start, let base = buffer.baseAddress { memmove(base, base + start, end - start) }
            end -= start
            start = 0
        }
        if end == buffer.count {
            let grown = UnsafeMutableRawBufferPointer.allocate(
                byteCount: min(buffer.count * 2, maxLineLength + 1), alignment: 16)
            if let source = buffer.baseAddress, let target = grown.baseAddress { memcpy(target, source, end) }
            buffer.deallocate()
            buffer = grown
        }
        let count = try readContent(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
        if count == 0 { atEOF = true } else { end += count }
    }

    /// What the file was compressed with, when it is read decompressed.
    public var compression: String? { content?.compression }

    private func readContent(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try content?.read(into: buffer) ?? file.read(into: buffer)
    }

    /// Discards the rest of an over-long line, up to and including its newline.
    private func skipLongLine() throws -> Int {
        var length = 0
        while true {
            if let newline = findNewline(from: start) {
                length += newline - start
                consumed += Int64(length + 1)
                start = newline + 1
                return length
            }
            length += end - start
            start = 0
            end = 0
            if atEOF {
                consumed += Int64(length)
                return length
            }
            let count = try readContent(into: buffer)
            if count == 0 { atEOF = true } else { end = count }
        }
    }
}
