import FerryCore

extension JSONParser {
    /// Parses a document that is one object, handing each element of the array at `key` to `element` as it is read
    /// instead of keeping it: a long list (a bundle's files, its zones) is never held as values.
    ///
    /// Repeated keys are refused, as ``parse(_:maxDepth:)`` refuses them.
    /// - Parameter element: each element of the array at `key`, with its index.
    /// - Returns: the other members, with `key` an empty array when it was one (kept as it was otherwise); `nil` when
    ///   the document is not an object.
    /// - Throws: ``JSONSyntaxError``, or what `element` throws.
    public static func parseObject(_ bytes: [UInt8], streaming key: String, element: (JSONValue, Int) throws -> Void) throws -> JSONObject? {
        // Every member fits: the whole document may be one.
        try parseObject(reading: ByteArrayReader(bytes).read, streaming: key, maxValueBytes: bytes.count + 1, element: element)
    }
}

extension JSONParser {
    /// Parses a document that is one object as its bytes are read, never holding it whole: as
    /// ``parseObject(_:streaming:element:)``, with the document's bytes pulled from `read` into a window.
    ///
    /// Each step of the parse (a member, an element) runs on the window; a step that runs into the window's end is
    /// run again once more bytes are in. So only the largest single member or element must fit: the window grows up
    /// to `maxValueBytes` for it.
    /// - Parameters:
    ///   - read: fills a buffer with the next bytes and returns their count (0 at the end).
    ///   - maxValueBytes: the largest member (but the streamed array) or element accepted.
    /// - Throws: ``JSONSyntaxError`` with the offset in the whole document, what `read` or `element` throws.
    public static func parseObject(
        reading read: (UnsafeMutableRawBufferPointer) throws -> Int, streaming key: String, maxValueBytes: Int = 64 << 20,
        element: (JSONValue, Int) throws -> Void
    ) throws -> JSONObject? {
        // The window reads only while this call runs.
        try withoutActuallyEscaping(read) { read in
            var window = JSONWindow(read: read, limit: maxValueBytes)
            defer { window.deallocate() }
            return try parseObject(in: &window, streaming: key, element: element)
        }
    }

    private static func parseObject(
        in window: inout JSONWindow, streaming key: String, element: (JSONValue, Int) throws -> Void
    ) throws -> JSONObject? {
        guard try window.step({ scanner in try scanner.peek() }) == .object else { return nil }
        try window.step { scanner in try scanner.beginObject() }
        var object = JSONObject()
        var first = true
        while true {
            // A member, unless it is the streamed array: read whole in one step.
            let next = try window.step { scanner -> (String, JSONValue?, Bool)? in
                var isFirst = first
                guard let name = try scanner.nextKey(&isFirst) else { return nil }
                if name == key, try scanner.peek() == .array {
                    try scanner.beginArray()
                    return (name, nil, isFirst)
                }
                let offset = scanner.offset
                if object[name] != nil { throw scanner.duplicate(name, at: offset) }
                return (name, try scanner.value(), isFirst)
            }
            guard let (name, value, isFirst) = next else { break }
            first = isFirst
            if let value {
                object[name] = value
                continue
            }
            guard object[name] == nil else { throw JSONSyntaxError(offset: window.position, reason: "repeated key \"\(name)\"") }
            var firstElement = true
            var index = 0
            while let value = try window.step({ scanner -> JSONValue? in
                var isFirst = firstElement
                guard try scanner.nextElement(&isFirst) else { return nil }
                return try scanner.value()
            }) {
                firstElement = false
                try element(value, index)
                index += 1
            }
            object[name] = .array([])
        }
        try window.step { scanner in try scanner.finish() }
        return object
    }
}

/// The bytes of a document being parsed, read in as the parse needs them (see
/// ``JSONParser/parseObject(reading:streaming:maxValueBytes:element:)``).
private struct JSONWindow {
    private let read: (UnsafeMutableRawBufferPointer) throws -> Int
    private let limit: Int
    private var buffer: UnsafeMutableRawBufferPointer
    /// The window's bytes: `buffer[0..<end]`, which are the document's from `base`.
    private var end = 0
    private var base = 0
    /// The offset in the buffer where the next step starts.
    private var start = 0
    private var atEnd = false

    init(read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int, limit: Int) {
        self.read = read
        self.limit = max(1, limit)
        buffer = .allocate(byteCount: min(self.limit, 64 << 10), alignment: 8)
    }

    func deallocate() { buffer.deallocate() }

    /// The offset in the whole document where the next step starts.
    var position: Int { base + start }

    /// Runs one step of the parse from where the last one ended, again with more bytes for as long as it needs them.
    mutating func step<Result>(_ body: (inout JSONScanner) throws -> Result) throws -> Result {
        while true {
            let (result, offset) = try ScannerStep.run(UnsafeRawBufferPointer(rebasing: buffer[0..<end]), from: start, body)
            switch result {
            case .success(let value) where atEnd || offset < end:
                start = offset
                return value
            case .failure(let error) where atEnd:
                throw JSONSyntaxError(offset: base + error.offset, reason: error.reason)
            default:
                // The step ran into the window's end, where the document may go on.
                try refill()
            }
        }
    }

    /// Drops the bytes before the current step and reads more, growing the window when the step fills it.
    private mutating func refill() throws {
        if start > 0 {
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<end - start]).copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            end -= start
            base += start
            start = 0
        }
        if end == buffer.count {
            guard buffer.count < limit else {
                throw JSONSyntaxError(offset: base, reason: "a value longer than \(limit) bytes; Ferry reads at most that much at once")
            }
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: min(limit, buffer.count * 2), alignment: 8)
            larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<end]))
            buffer.deallocate()
            buffer = larger
        }
        let count = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
        if count == 0 { atEnd = true }
        end += count
    }
}

/// Runs a scanner step on a buffer and gives its result (a syntax error as a value) with where it stopped.
private enum ScannerStep {
    static func run<Value>(
        _ bytes: UnsafeRawBufferPointer, from offset: Int, _ body: (inout JSONScanner) throws -> Value
    ) throws -> (Result<Value, JSONSyntaxError>, Int) {
        var scanner = JSONScanner(bytes)
        scanner.rewind(to: offset)
        do {
            let value = try body(&scanner)
            return (.success(value), scanner.offset)
        } catch let error as JSONSyntaxError {
            return (.failure(error), scanner.offset)
        }
    }
}
