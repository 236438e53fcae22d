import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pull-style JSON reader over raw bytes: the caller asks for the value it expects next.
///
/// It is Ferry's one JSON lexer. ``JSONParser`` builds trees with it; hot paths (millions of NDJSON records) decode
/// straight from bytes with it, without building a tree. Written by hand because Foundation's parsers give
/// neither exact 64-bit integers, byte offsets in errors, nor this speed. Strict RFC 8259: invalid UTF-8, lone
/// surrogates, control characters, leading zeros and trailing garbage are errors with the byte offset.
public struct JSONScanner {
    /// What the next value is, judged by its first byte.
    public enum Kind: Sendable, Hashable {
        case object, array, string, number, bool, null
    }

    /// A number as written: exact when it is an integer that fits in 64 bits.
    public enum Number: Sendable, Hashable {
        case integer(Int64)
        /// An integer above `Int64.max`, up to `UInt64.max`.
        case unsigned(UInt64)
        case double(Double)
    }

    private let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    public private(set) var offset = 0
    private var scratch: [UInt8] = []

    /// Reads from a buffer that must outlive the scanner.
    package init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    // MARK: - Structure

    /// The kind of the next value (after whitespace), without consuming it.
    public mutating func peek() throws(JSONSyntaxError) -> Kind {
        skipWhitespace()
        guard offset < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw error("unexpected \(describeCurrent()), expected a value")
        }
    }

    /// Consumes `{`.
    public mutating func beginObject() throws(JSONSyntaxError) {
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "{") else { throw error("expected an object, found \(describeCurrent())") }
        offset += 1
    }

    /// The next member's key (consuming the key and its colon), or `nil` after consuming the closing `}`.
    /// - Parameter first: `true` before the first member; the scanner sets it to `false`.
    public mutating func nextKey(_ first: inout Bool) throws(JSONSyntaxError) -> String? {
        try nextRawKey(&first)?.string
    }

    /// The next member's key (consuming the key and its colon) as a view of the input, or `nil` after consuming the
    /// closing `}`: matching keys against literals this way builds no string, which is most of the cost of a key.
    /// - Parameter first: `true` before the first member; the scanner sets it to `false`.
    public mutating func nextRawKey(_ first: inout Bool) throws(JSONSyntaxError) -> JSONRawString? {
        skipWhitespace()
        guard offset < bytes.count else { throw error("unexpected end of input inside an object") }
        if bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return nil
        }
        if !first {
            guard bytes[offset] == UInt8(ascii: ",") else { throw error("expected ',' or '}' in object, found \(describeCurrent())") }
            offset += 1
            skipWhitespace()
        }
        first = false
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
            throw error("expected a string key in object, found \(describeCurrent())")
        }
        let key = try rawString()
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else {
            throw error("expected ':' after object key, found \(describeCurrent())")
        }
        offset += 1
        return key
    }

    /// Consumes `[`.
    public mutating func beginArray() throws(JSONSyntaxError) {
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "[") else { throw error("expected an array, found \(describeCurrent())") }
        offset += 1
    }

    /// Whether another element follows (consuming the comma), or `false` after consuming the closing `]`.
    /// - Parameter first: `true` before the first element; the scanner sets it to `false`.
    public mutating func nextElement(_ first: inout Bool) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard offset < bytes.count else { throw error("unexpected end of input inside an array") }
        if bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return false
        }
        if !first {
            guard bytes[offset] == UInt8(ascii: ",") else { throw error("expected ',' or ']' in array, found \(describeCurrent())") }
            offset += 1
        }
        first = false
        return true
    }

    /// Checks that only whitespace remains.
    public mutating func finish() throws(JSONSyntaxError) {
        skipWhitespace()
        guard offset == bytes.count else { throw error("unexpected \(describeCurrent()) after the end of the document") }
    }

    /// Moves back to an earlier offset (to read a part again).
    public mutating func rewind(to offset: Int) { self.offset = offset }

    // MARK: - Scalars

    /// Reads a string.
    public mutating func string() throws(JSONSyntaxError) -> String {
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
            throw error("expected a string, found \(describeCurrent())")
        }
        return try scanString()
    }

    /// Reads a string as a view of the input (valid while the input is), building no string unless it has escapes.
    public mutating func rawString() throws(JSONSyntaxError) -> JSONRawString {
        skipWhitespace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
            throw error("expected a string, found \(describeCurrent())")
        }
        let open = offset
        let escaped = try skipString()
        let raw = UnsafeRawBufferPointer(rebasing: bytes[(open + 1)..<(offset - 1)])
        guard escaped else { return JSONRawString(raw: raw, unescaped: nil) }
        offset = open
        return JSONRawString(raw: raw, unescaped: try scanString())
    }

    /// Reads a number.
    public mutating func number() throws(JSONSyntaxError) -> Number {
        skipWhitespace()
        let start = offset
        var negative = false
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") {
            negative = true
            offset += 1
        }
        guard offset < bytes.count, isDigit(bytes[offset]) else { throw error("expected a number, found \(describeCurrent())") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            if offset < bytes.count, isDigit(bytes[offset]) { throw error("leading zero in number") }
        } else {
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw error("expected a digit after '.'") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw error("expected a digit in exponent") }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if isInteger, let value = exactInteger(from: negative ? start + 1 : start, negative: negative) {
            return .integer(value)
        }
        if isInteger, !negative, let value = UInt64(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)) {
            return .unsigned(value)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "number \(text) is out of range")
        }
        return .double(value)
    }

    /// Reads `true` or `false`.
    public mutating func bool() throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        if matchWord("true") { return true }
        if matchWord("false") { return false }
        throw error("expected true or false, found \(describeCurrent())")
    }

    /// Reads `null`.
    public mutating func null() throws(JSONSyntaxError) {
        skipWhitespace()
        guard matchWord("null") else { throw error("expected null, found \(describeCurrent())") }
    }

    /// Reads any value as a tree, refusing nesting deeper than `maxDepth`.
    public mutating func value(maxDepth: Int = JSONParser.defaultMaxDepth) throws(JSONSyntaxError) -> JSONValue {
        try value(depth: 0, maxDepth: maxDepth)
    }

    /// Skips any value, checking its syntax (strings are validated, no tree or string is built).
    public mutating func skipValue(maxDepth: Int = JSONParser.defaultMaxDepth) throws(JSONSyntaxError) {
        try skip(depth: 0, maxDepth: maxDepth)
    }

    private mutating func skip(depth: Int, maxDepth: Int) throws(JSONSyntaxError) {
        switch try peek() {
        case .object:
            guard depth < maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
            try beginObject()
            var first = true
            while try nextKey(&first) != nil { try skip(depth: depth + 1, maxDepth: maxDepth) }
        case .array:
            guard depth < maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
            try beginArray()
            var first = true
            while try nextElement(&first) { try skip(depth: depth + 1, maxDepth: maxDepth) }
        case .string: try skipString()
        case .number: _ = try number()
        case .bool: _ = try bool()
        case .null: try null()
        }
    }

    /// Steps over a string, validating it, without building it; whether it has escapes.
    @discardableResult
    private mutating func skipString() throws(JSONSyntaxError) -> Bool {
        let open = offset
        let start = offset + 1
        let nonASCII = try skipUnescaped(from: start)
        guard bytes[offset] == UInt8(ascii: "\"") else {
            offset = open
            _ = try scanString()
            return true
        }
        if nonASCII, let bad = UTF8Validation.firstInvalidOffset(UnsafeRawBufferPointer(rebasing: bytes[start..<offset])) {
            throw JSONSyntaxError(offset: start + bad, reason: "invalid UTF-8 in string")
        }
        offset += 1
        return false
    }

    /// Steps over a string's unescaped bytes to its first quote or backslash; whether any byte is non-ASCII.
    ///
    /// `start` is just inside the opening quote. Throws at a control byte, and where the input ends first. Inlined into
    /// its two callers (a call per string shows in a pack's profile).
    @inline(__always)
    private mutating func skipUnescaped(from start: Int) throws(JSONSyntaxError) -> Bool {
        let plain = JSONStringBytes.skipPlainWords(bytes, from: start, asciiOnly: false)
        offset = plain.offset
        var nonASCII = plain.nonASCII
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return nonASCII }
            if byte < 0x20 { throw error("unescaped control character 0x\(String(byte, radix: 16)) in string") }
            if byte >= 0x80 { nonASCII = true }
            offset += 1
        }
        throw JSONSyntaxError(offset: start - 1, reason: "unterminated string")
    }

    private mutating func value(depth: Int, maxDepth: Int) throws(JSONSyntaxError) -> JSONValue {
        switch try peek() {
        case .object:
            guard depth < maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
            try beginObject()
            var members: [JSONObject.Member] = []
            var seen: Set<String>? = nil
            var first = true
            while true {
                let keyOffset = offset
                guard let key = try nextKey(&first) else { break }
                if members.count < 16 {
                    if members.contains(where: { $0.key == key }) { throw duplicate(key, at: keyOffset) }
                } else {
                    if seen == nil { seen = Set(members.map(\.key)) }
                    if seen?.insert(key).inserted == false { throw duplicate(key, at: keyOffset) }
                }
                members.append(JSONObject.Member(key: key, value: try value(depth: depth + 1, maxDepth: maxDepth)))
            }
            return .object(JSONObject(members))
        case .array:
            guard depth < maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
            try beginArray()
            var elements: [JSONValue] = []
            var first = true
            while try nextElement(&first) { elements.append(try value(depth: depth + 1, maxDepth: maxDepth)) }
            return .array(elements)
        case .string: return .string(try string())
        case .number:
            switch try number() {
            case .integer(let value): return .integer(value)
            case .unsigned(let value): return .unsigned(value)
            case .double(let value): return .number(value)
            }
        case .bool: return .bool(try bool())
        case .null:
            try null()
            return .null
        }
    }

    /// The error for a key that appears twice in one object.
    public func duplicate(_ key: String, at offset: Int) -> JSONSyntaxError {
        // Skip the leading whitespace and comma so the offset points at the key's quote.
        var position = offset
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") { position += 1 }
        return JSONSyntaxError(offset: position, reason: "duplicate key \"\(key)\"")
    }

    // MARK: - Strings

    private mutating func scanString() throws(JSONSyntaxError) -> String {
        let open = offset
        let start = offset + 1
        // Fast path: no escapes.
        let nonASCII = try skipUnescaped(from: start)
        if bytes[offset] == UInt8(ascii: "\"") {
            let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
            offset += 1
            let utf8 = slice.assumingMemoryBound(to: UInt8.self)
            if !nonASCII { return String(decoding: utf8, as: UTF8.self) }
            // One validating pass builds the string; the offset of the bad byte is only worked out on failure.
            if let text = String(validating: utf8, as: UTF8.self) { return text }
            throw JSONSyntaxError(offset: start + (UTF8Validation.firstInvalidOffset(slice) ?? 0), reason: "invalid UTF-8 in string")
        }
        // Slow path: copy and unescape.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                let bad = scratch.withUnsafeBytes { UTF8Validation.firstInvalidOffset($0) }
                guard bad == nil else { throw JSONSyntaxError(offset: start, reason: "invalid UTF-8 in string") }
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try scanEscape()
            case 0..<0x20:
                throw error("unescaped control character 0x\(String(byte, radix: 16)) in string")
            default:
                scratch.append(byte)
                offset += 1
            }
        }
        throw JSONSyntaxError(offset: open, reason: "unterminated string")
    }

    private mutating func scanEscape() throws(JSONSyntaxError) {
        offset += 1
        guard offset < bytes.count else { throw error("unterminated escape sequence") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try scanHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                    throw error("lone high surrogate \\u\(String(scalar, radix: 16)) in string")
                }
                offset += 2
                let low = try scanHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate in string") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("lone low surrogate \\u\(String(scalar, radix: 16)) in string")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid unicode escape") }
            if let encoded = UTF8.encode(unicode) { scratch.append(contentsOf: encoded) }
        default:
            offset -= 1
            throw error("invalid escape '\\\(describeCurrent())' in string")
        }
    }

    private mutating func scanHex4() throws(JSONSyntaxError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    // MARK: - Helpers

    /// The digits from `start` to the current offset as an Int64, or `nil` on overflow.
    private func exactInteger(from start: Int, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for position in start..<offset {
            let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func matchWord(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count, let base = bytes.baseAddress, memcmp(word.utf8Start, base + offset, count) == 0 else {
            return false
        }
        offset += count
        return true
    }

    private func describeCurrent() -> String {
        guard offset < bytes.count else { return "end of input" }
        let byte = bytes[offset]
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    /// An error at the current offset.
    public func error(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: offset, reason: reason) }
}

/// A string (an object key or a value) as read by ``JSONScanner/nextRawKey(_:)`` or ``JSONScanner/rawString()``:
/// a view of the input, valid while the input is.
public struct JSONRawString {
    /// The bytes between the quotes, as written (escapes included).
    @usableFromInline package let raw: UnsafeRawBufferPointer
    /// The string with its escapes resolved, when it had any.
    public let unescaped: String?

    /// Whether the string is `literal` (an ASCII literal without characters that need escaping).
    @inlinable
    public func matches(_ literal: StaticString) -> Bool {
        withBytes { $0.hasSameBytes(as: UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)) }
    }

    /// Calls `body` with the string's UTF-8 bytes, escapes resolved (the input itself when there were none).
    @inlinable
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        guard var unescaped else { return try body(raw) }
        return try unescaped.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }

    /// The string itself.
    public var string: String { unescaped ?? String(decoding: raw, as: UTF8.self) }

    /// Lets `switch key { case "recordName": … }` match without building a string.
    @inlinable
    public static func ~= (literal: StaticString, key: JSONRawString) -> Bool { key.matches(literal) }
}

/// UTF-8 validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
@usableFromInline
enum UTF8Validation {
    /// The offset of the first byte of the first invalid sequence, or `nil` if all bytes are valid UTF-8.
    @usableFromInline
    static func firstInvalidOffset(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] < 0x80 {
                index += 1
                // Runs of ASCII a word at a time.
                while bytes.count - index >= 8,
                    !JSONStringBytes.hasNonASCII(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
                {
                    index += 8
                }
                continue
            }
            guard let length = wellFormedLength(bytes, at: index) else { return index }
            index += length
        }
        return nil
    }

    /// The length of the well-formed multi-byte sequence at `index` (whose lead byte is 0x80 or above), or `nil`.
    @inlinable
    static func wellFormedLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xBF
        switch bytes[index] {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, second) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, second) = (3, 0x80...0x9F)
        case 0xF0: (length, second) = (4, 0x90...0xBF)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, second) = (4, 0x80...0x8F)
        default: return nil
        }
        guard bytes.count - index >= length, second.contains(bytes[index + 1]) else { return nil }
        for position in (index + 2)..<(index + length) where bytes[position] & 0xC0 != 0x80 { return nil }
        return length
    }
}
