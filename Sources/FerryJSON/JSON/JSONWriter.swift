import FerryCore

/// Writes JSON in Ferry's canonical form: no insignificant whitespace, object keys in UTF-8 byte order, minimal
/// string escapes, integers as plain digits and doubles as their shortest round-trip form.
///
/// The canonical form is what record digests are computed over, so it must not change between versions: it is
/// produced here byte by byte instead of by an encoder whose formatting Ferry does not control.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// Creates an empty writer.
    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// Removes everything written, keeping the storage.
    public mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    /// Appends raw, already valid JSON bytes.
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends one byte of JSON punctuation.
    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Appends bytes that are already valid JSON (a pre-escaped key, a literal).
    public mutating func raw(_ json: [UInt8]) { bytes.append(contentsOf: json) }

    /// Appends raw, already valid JSON bytes from a buffer.
    package mutating func raw(_ json: UnsafeRawBufferPointer) { bytes.append(contentsOf: json) }

    /// The number of bytes written so far.
    public var count: Int { bytes.count }

    /// Drops what was written after the first `count` bytes (to take back a part that turned out not to be wanted).
    public mutating func truncate(to count: Int) { bytes.removeSubrange(count...) }

    /// Lets a formatter append already valid JSON in place (no intermediate string).
    public mutating func appendRaw(_ body: (inout [UInt8]) -> Void) { body(&bytes) }

    /// Appends bytes as a quoted standard base64 string with padding (RFC 4648 §4), without an intermediate string.
    public mutating func base64(_ data: [UInt8]) {
        data.withUnsafeBufferPointer { base64($0) }
    }

    /// Appends bytes as a quoted standard base64 string with padding.
    package mutating func base64(_ data: UnsafeBufferPointer<UInt8>) {
        let count = data.count
        let encoded = (count + 2) / 3 * 4
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "\""), count: encoded + 2))
        Self.base64Alphabet.withUnsafeBufferPointer { table in
            bytes.withUnsafeMutableBufferPointer { output in
                var out = start + 1
                var index = 0
                while index + 3 <= count {
                    let chunk = UInt32(data[index]) << 16 | UInt32(data[index + 1]) << 8 | UInt32(data[index + 2])
                    output[out] = table[Int(chunk >> 18 & 0x3F)]
                    output[out + 1] = table[Int(chunk >> 12 & 0x3F)]
                    output[out + 2] = table[Int(chunk >> 6 & 0x3F)]
                    output[out + 3] = table[Int(chunk & 0x3F)]
                    out += 4
                    index += 3
                }
                let rest = count - index
                if rest > 0 {
                    let chunk = UInt32(data[index]) << 16 | (rest == 2 ? UInt32(data[index + 1]) << 8 : 0)
                    output[out] = table[Int(chunk >> 18 & 0x3F)]
                    output[out + 1] = table[Int(chunk >> 12 & 0x3F)]
                    output[out + 2] = rest == 2 ? table[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "=")
                    output[out + 3] = UInt8(ascii: "=")
                }
            }
        }
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends a string literal with escapes.
    public mutating func string(_ value: String) {
        value.withUTF8Bytes { string(utf8: $0) }
    }

    /// Appends a string literal with escapes from its UTF-8 bytes (as a database row holds it, without a `String`).
    package mutating func string(utf8 text: UnsafeRawBufferPointer) {
        string(utf8: text.assumingMemoryBound(to: UInt8.self))
    }

    private mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        var index = 0
        let count = utf8.count
        while index < count {
            let byte = utf8[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                if index > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                appendEscape(byte)
                runStart = index + 1
            }
            index += 1
        }
        if count > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a string as a scanner read it: its bytes as they were when it had no escapes (a scanned string
    /// holds no quote, backslash or control byte, the only bytes ``string(_:)-(String)`` escapes), else re-escaped.
    public mutating func string(_ text: JSONRawString) {
        guard let unescaped = text.unescaped else {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: text.raw)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        string(unescaped)
    }

    /// Appends an object key and its colon.
    public mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends an integer.
    public mutating func integer(_ value: Int64) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// Appends a finite double in its shortest round-trip form; a non-finite value (which validation rejects
    /// before anything is written) becomes `null` so the output stays valid JSON.
    public mutating func double(_ value: Double) {
        guard value.isFinite else {
            raw("null")
            return
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    /// Appends `true` or `false`.
    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// Appends any JSON value in canonical form (object keys sorted by UTF-8 bytes).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): bool(flag)
        case .integer(let number): integer(number)
        case .unsigned(let number): bytes.append(contentsOf: String(number).utf8)
        case .number(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in JSONWriter.sortedMembers(object).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                key(member.key)
                self.value(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends an object in canonical form with the member `key` an array made element by element: the bytes
    /// ``value(_:)`` would write for the whole object, handed to `flush` whenever they reach `flushEvery` (the last
    /// bytes are left in the writer).
    /// - Parameters:
    ///   - object: the other members (any member named `key` is replaced).
    ///   - elements: hands the array's elements, in order, to the function it is given.
    public mutating func object(
        _ object: JSONObject, streaming key: String, flushEvery: Int, flush: ([UInt8]) throws -> Void,
        elements: ((JSONValue) throws -> Void) throws -> Void
    ) throws {
        try streamedObject(object, indent: nil, streaming: key, flushEvery: flushEvery, flush: flush, elements: elements)
    }

    /// Appends a value pretty-printed with two-space indentation and sorted keys, for files people read.
    public mutating func pretty(_ value: JSONValue, indent: Int = 0) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                pretty(element, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let object) where object.count > 0:
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in JSONWriter.sortedMembers(object).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                string(member.key)
                raw(": ")
                pretty(member.value, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "}"))
        default:
            self.value(value)
        }
    }

    /// Appends an object pretty-printed as ``pretty(_:indent:)`` would, with the member `key` an array made element by
    /// element: the same bytes, without ever holding the whole array as values (a bundle manifest lists every file).
    /// - Parameters:
    ///   - object: the other members (any member named `key` is replaced).
    ///   - flushEvery: whenever the bytes written reach this size, they are handed to `flush` and dropped from the
    ///     writer, so that the document is never held whole (`.max`: never); the last bytes are left in the writer.
    ///   - elements: hands the array's elements, in order, to the function it is given.
    public mutating func pretty(
        _ object: JSONObject, indent: Int = 0, streaming key: String, flushEvery: Int, flush: ([UInt8]) throws -> Void,
        elements: ((JSONValue) throws -> Void) throws -> Void
    ) throws {
        try streamedObject(object, indent: indent, streaming: key, flushEvery: flushEvery, flush: flush, elements: elements)
    }

    /// An object with a streamed array member, pretty-printed at `indent`, or in canonical form when it is `nil`.
    private mutating func streamedObject(
        _ object: JSONObject, indent: Int?, streaming key: String, flushEvery: Int, flush: ([UInt8]) throws -> Void,
        elements: ((JSONValue) throws -> Void) throws -> Void
    ) throws {
        /// A line break before something `depth` levels inside the object (nothing in canonical form).
        func lineBreak(_ depth: Int) {
            if let indent { newline(indent + depth) }
        }
        func write(_ value: JSONValue, depth: Int) {
            if let indent { pretty(value, indent: indent + depth) } else { self.value(value) }
        }
        var members = object.members.filter { $0.key != key }
        members.append(JSONObject.Member(key: key, value: .array([])))
        bytes.append(UInt8(ascii: "{"))
        for (index, member) in JSONWriter.sortedMembers(JSONObject(members)).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            lineBreak(1)
            string(member.key)
            if indent == nil { bytes.append(UInt8(ascii: ":")) } else { raw(": ") }
            guard member.key == key else {
                write(member.value, depth: 1)
                continue
            }
            bytes.append(UInt8(ascii: "["))
            var empty = true
            // `elements` calls back into this writer, and the callback calls `flush`: neither outlives this call.
            try withoutActuallyEscaping(flush) { flush in
                try elements { element in
                    if !empty { bytes.append(UInt8(ascii: ",")) }
                    empty = false
                    lineBreak(2)
                    write(element, depth: 2)
                    if bytes.count >= flushEvery {
                        try flush(bytes)
                        bytes.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !empty { lineBreak(1) }
            bytes.append(UInt8(ascii: "]"))
        }
        lineBreak(0)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Hands a whole pretty-printed document (an object, with a newline after it) to `emit` in pieces of about 64 KiB,
    /// the array at `key` made element by element: see ``pretty(_:indent:streaming:flushEvery:flush:elements:)``.
    public static func prettyDocument(
        _ object: JSONObject, streaming key: String, to emit: ([UInt8]) throws -> Void,
        elements: ((JSONValue) throws -> Void) throws -> Void
    ) throws {
        var json = JSONWriter(capacity: (1 << 16) + 4096)
        try json.pretty(object, streaming: key, flushEvery: 1 << 16, flush: emit, elements: elements)
        json.byte(UInt8(ascii: "\n"))
        try emit(json.bytes)
    }

    /// The canonical encoding of a value.
    public static func canonical(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    /// The pretty encoding of a value, ending with a newline.
    public static func prettyText(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.pretty(value)
        writer.byte(UInt8(ascii: "\n"))
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Orders strings by their UTF-8 bytes, the order of canonical object keys.
    public static func keyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    private static func sortedMembers(_ object: JSONObject) -> [JSONObject.Member] {
        object.members.sorted { keyPrecedes($0.key, $1.key) }
    }

    private mutating func newline(_ indent: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(0x22)
        case 0x5C: bytes.append(0x5C)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}
