import FerryCore
import FerryJSON

/// Records from JSON documents as well as NDJSON: what `ferry pack` reads.
///
/// CloudKit Web Services answers with `{"records": [...]}`, tools pretty-print records one after another, and
/// exports write arrays of them; all of these are cut into one record's text at a time here, through the same
/// bounded buffer as lines, so that the decoder sees each record as it would see a line.
extension LineReader {
    /// How ``nextRecordText()`` cuts a file into records.
    enum RecordLayout {
        /// One record per line (NDJSON).
        case lines
        /// JSON values: records one after another, arrays of records, objects with a `records` array.
        case document
    }

    /// Where the reading of a document is.
    struct DocumentState {
        /// Inside an array of records.
        var inArray = false
        /// A record of the array was just read: a comma or the array's end comes next.
        var afterValue = false
        /// The array is an object's `records` member: the rest of the object is skipped after it.
        var inContainer = false
    }

    /// The next record's text, or `nil` at the end of the file: a line of NDJSON, or one record of a JSON document.
    ///
    /// A file whose first value is an array, or an object that does not close on its first line, is read as a JSON
    /// document: records one after another (as pretty-printers write them), arrays of records, and objects with a
    /// `records` array (CloudKit Web Services responses; their other members are skipped). Any other file is read as
    /// NDJSON, a line at a time. A record's position is the line and byte offset where it starts. Blank lines, and the
    /// text of a record longer than the limit, are handled as ``nextLine()`` handles lines.
    /// - Throws: ``CoreError`` when the file cannot be read, or (`jsonSyntax`) when a document is broken between its
    ///   records: what was expected, at which line and byte.
    public func nextRecordText() throws -> Line? {
        if looksForByteOrderMark { try skipByteOrderMark() }
        let layout = try recordLayout ?? detectRecordLayout()
        recordLayout = layout
        return layout == .lines ? try nextLine() : try nextDocumentValue()
    }

    // MARK: - Deciding

    /// Looks at the first value without consuming anything: a document if it is an array, or an object that goes on
    /// past its first line.
    private func detectRecordLayout() throws -> RecordLayout {
        var index = start
        while true {
            if index == end {
                guard !atEOF, end - start < maxLineLength else { return .lines }
                index = try refill(keeping: index)
                continue
            }
            guard Self.isSpace(buffer[index]) else { break }
            index += 1
        }
        switch buffer[index] {
        case UInt8(ascii: "["):
            return .document
        case UInt8(ascii: "{"):
            var boundary = JSONValueBoundary()
            var scanned = index
            while true {
                let lineEnd = findNewline(from: scanned) ?? end
                if boundary.scan(UnsafeRawBufferPointer(rebasing: buffer[scanned..<lineEnd])) != nil { return .lines }
                if lineEnd < end { return .document }
                guard !atEOF, end - start < maxLineLength else { return .lines }
                scanned = try refill(keeping: end)
            }
        default:
            return .lines
        }
    }

    // MARK: - Documents

    /// The next record of a JSON document.
    private func nextDocumentValue() throws -> Line? {
        while true {
            guard let byte = try peekSkippingSpace() else {
                if document.inArray { throw syntaxError("the file ends inside an array of records; expected \"]\"") }
                return nil
            }
            if document.inArray {
                switch byte {
                case UInt8(ascii: "]"):
                    advance(to: start + 1)
                    document.inArray = false
                    if document.inContainer {
                        document.inContainer = false
                        try skipRestOfContainer()
                    }
                case UInt8(ascii: ","):
                    guard document.afterValue else { throw syntaxError("expected a record in the array, found \",\"") }
                    advance(to: start + 1)
                    document.afterValue = false
                default:
                    guard !document.afterValue else {
                        throw syntaxError("expected \",\" or \"]\" after a record in the array, found \(Self.describe(byte))")
                    }
                    document.afterValue = true
                    return try takeValue()
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "["):
                advance(to: start + 1)
                document.inArray = true
                document.afterValue = false
            case UInt8(ascii: "{"):
                if try enterRecordsMember() { continue }
                return try takeValue()
            default:
                throw syntaxError(
                    "expected a record object, an array of records or an object with a \"records\" array, found \(Self.describe(byte))")
            }
        }
    }

    /// Cuts out the value that starts at `start`.
    private func takeValue() throws -> Line {
        let position = Position(line: lineNumber + 1, offset: consumed)
        var boundary = JSONValueBoundary()
        var scanned = start
        while true {
            if let found = boundary.scan(UnsafeRawBufferPointer(rebasing: buffer[scanned..<end])) {
                let valueEnd = scanned + found
                let line = Line.bytes(UnsafeRawBufferPointer(rebasing: buffer[start..<valueEnd]), position)
                advance(to: valueEnd)
                return line
            }
            if atEOF {
                // A scalar may end the file; anything else was cut short, and the decoder says so.
                let line = Line.bytes(UnsafeRawBufferPointer(rebasing: buffer[start..<end]), position)
                advance(to: end)
                return line
            }
            if end - start >= maxLineLength { return .tooLong(position, length: try skipLongValue(boundary)) }
            scanned = try refill(keeping: end)
        }
    }

    /// Skips the rest of a value too long to hold, whose bytes up to `end` `boundary` has scanned.
    /// - Returns: the value's length.
    private func skipLongValue(_ boundary: JSONValueBoundary) throws -> Int {
        var boundary = boundary
        var length = end - start
        advance(to: end)
        while true {
            try refill()
            if start == end { return length }
            if let found = boundary.scan(UnsafeRawBufferPointer(rebasing: buffer[start..<end])) {
                length += found
                advance(to: start + found)
                return length
            }
            length += end - start
            advance(to: end)
        }
    }

    /// At an object at the top level: moves into its `records` array when it has one (skipping the members before
    /// it) and returns whether it did; otherwise the object is a record.
    private func enterRecordsMember() throws -> Bool {
        while true {
            switch recordsArrayStart() {
            case .found(let index):
                advance(to: index)
                document.inArray = true
                document.afterValue = false
                document.inContainer = true
                return true
            case .notContainer:
                return false
            case .needMore:
                guard !atEOF, end - start < maxLineLength else { return false }
                // The walk starts again from the object's start: fill the buffer, so that it does so rarely.
                repeat { try refill() } while !atEOF && end < buffer.count
            }
        }
    }

    private enum MemberWalk {
        /// Just past the `[` of the `records` member.
        case found(Int)
        case notContainer
        case needMore
    }

    /// Walks the members of the object at `start`, looking for `"records": [`.
    private func recordsArrayStart() -> MemberWalk {
        var index = start + 1
        func skipSpace() { while index < end, Self.isSpace(buffer[index]) { index += 1 } }
        while true {
            skipSpace()
            guard index < end else { return .needMore }
            guard buffer[index] == UInt8(ascii: "\"") else { return .notContainer }
            var key = JSONValueBoundary()
            guard let keyLength = key.scan(UnsafeRawBufferPointer(rebasing: buffer[index..<end])) else { return .needMore }
            let isRecords = buffer[(index + 1)..<(index + keyLength - 1)].elementsEqual("records".utf8)
            index += keyLength
            skipSpace()
            guard index < end else { return .needMore }
            guard buffer[index] == UInt8(ascii: ":") else { return .notContainer }
            index += 1
            skipSpace()
            guard index < end else { return .needMore }
            if isRecords { return buffer[index] == UInt8(ascii: "[") ? .found(index + 1) : .notContainer }
            var value = JSONValueBoundary()
            guard let valueLength = value.scan(UnsafeRawBufferPointer(rebasing: buffer[index..<end])) else { return .needMore }
            index += valueLength
            skipSpace()
            guard index < end else { return .needMore }
            guard buffer[index] == UInt8(ascii: ",") else { return .notContainer }
            index += 1
        }
    }

    /// Skips what follows a `records` array in its object, up to the object's end.
    private func skipRestOfContainer() throws {
        var boundary = JSONValueBoundary(insideContainers: 1)
        while true {
            if let found = boundary.scan(UnsafeRawBufferPointer(rebasing: buffer[start..<end])) {
                advance(to: start + found)
                return
            }
            advance(to: end)
            guard !atEOF else { throw syntaxError("the file ends inside the object holding the records; expected \"}\"") }
            try refill()
        }
    }

    // MARK: - Moving

    /// Refills the buffer, which moves its bytes: where the byte at `index` is then.
    private func refill(keeping index: Int) throws -> Int {
        let offset = index - start
        try refill()
        return start + offset
    }

    /// The next byte that is not whitespace, consumed up to it; `nil` at the end of the file.
    private func peekSkippingSpace() throws -> UInt8? {
        while true {
            while start < end {
                let byte = buffer[start]
                guard Self.isSpace(byte) else { return byte }
                if byte == 0x0A { lineNumber += 1 }
                start += 1
                consumed += 1
            }
            if atEOF { return nil }
            try refill()
        }
    }

    /// Consumes the buffered bytes up to `index`, counting their lines.
    private func advance(to index: Int) {
        var next = start
        while let newline = findNewline(from: next), newline < index {
            lineNumber += 1
            next = newline + 1
        }
        consumed += Int64(index - start)
        start = index
    }

    private func syntaxError(_ message: String) -> CoreError {
        CoreError(
            .jsonSyntax,
            "\(path): line \(lineNumber + 1), byte \(consumed): \(message); give NDJSON (one record per line), records one after another, an array of records, or {\"records\": [...]}"
        )
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "\"\(Character(Unicode.Scalar(byte)))\"" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}
