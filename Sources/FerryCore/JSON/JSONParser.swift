#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a document is not valid JSON, and where.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset of the problem within the parsed buffer.
    public var offset: Int
    /// What was expected or found.
    public var reason: String

    public var description: String { "at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 JSON parser over raw bytes.
///
/// Written by hand rather than using Foundation's `JSONSerialization` because Ferry needs exact 64-bit integers,
/// byte offsets in every error, rejection of invalid UTF-8, duplicate keys and hostile nesting, and it parses
/// millions of NDJSON lines per run.
public struct JSONParser {
    /// The deepest nesting accepted.
    public static let defaultMaxDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private let maxDepth: Int
    private var scratch: [UInt8] = []

    private init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Parses one complete JSON document; only whitespace may follow it.
    /// - Throws: ``JSONSyntaxError`` with the byte offset of the first problem.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError)
        -> JSONValue
    {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else {
            throw parser.error("unexpected \(parser.describeCurrent()) after the end of the document")
        }
        return value
    }

    /// Parses one complete JSON document from an array of bytes.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONSyntaxError) -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { buffer in try parse(buffer, maxDepth: maxDepth) }
        } catch let error as JSONSyntaxError {
            throw error
        } catch {
            throw JSONSyntaxError(offset: 0, reason: "\(error)")
        }
    }

    /// Parses one complete JSON document from a string.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected \(describeCurrent()), expected a value")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
        var members: [JSONObject.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(members))
        }
        var seen: Set<String>? = nil
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key in object, found \(describeCurrent())")
            }
            let keyOffset = index
            let key = try parseString()
            // Duplicate keys make a document ambiguous; linear search is fastest for the usual small objects.
            if members.count < 16 {
                if members.contains(where: { $0.key == key }) {
                    throw JSONSyntaxError(offset: keyOffset, reason: "duplicate key \"\(key)\"")
                }
            } else {
                if seen == nil { seen = Set(members.map(\.key)) }
                if seen?.insert(key).inserted == false {
                    throw JSONSyntaxError(offset: keyOffset, reason: "duplicate key \"\(key)\"")
                }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after object key, found \(describeCurrent())")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append(JSONObject.Member(key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject(members))
            }
            throw error("expected ',' or '}' in object, found \(describeCurrent())")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            throw error("expected ',' or ']' in array, found \(describeCurrent())")
        }
    }

    // MARK: - Strings

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        let open = index
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start + Self.invalidUTF8Offset(slice), reason: "invalid UTF-8 in string")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("unescaped control character 0x\(String(byte, radix: 16)) in string") }
            index += 1
        }
        guard index < bytes.count else { throw JSONSyntaxError(offset: open, reason: "unterminated string") }
        // Slow path: copy and unescape.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scratch, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, reason: "invalid UTF-8 in string")
                }
                return text
            case UInt8(ascii: "\\"):
                try parseEscape()
            case 0..<0x20:
                throw error("unescaped control character 0x\(String(byte, radix: 16)) in string")
            default:
                scratch.append(byte)
                index += 1
            }
        }
        throw JSONSyntaxError(offset: open, reason: "unterminated string")
    }

    private mutating func parseEscape() throws(JSONSyntaxError) {
        index += 1
        guard index < bytes.count else { throw error("unterminated escape sequence") }
        let byte = bytes[index]
        index += 1
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
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("lone high surrogate \\u\(String(scalar, radix: 16)) in string") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate in string") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("lone low surrogate \\u\(String(scalar, radix: 16)) in string")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid unicode escape") }
            if let encoded = UTF8.encode(unicode) { scratch.append(contentsOf: encoded) }
        default:
            index -= 1
            throw error("invalid escape '\\\(describeCurrent())' in string")
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit in number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("leading zero in number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit in exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger, let value = exactInteger(from: negative ? start + 1 : start, negative: negative) {
            return .integer(value)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "number \(text) is out of range")
        }
        return .number(value)
    }

    /// The digits from `start` to the current index as an Int64, or `nil` on overflow.
    private func exactInteger(from start: Int, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for position in start..<index {
            let digit = Int64(bytes[position] - UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }

    // MARK: - Helpers

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmp(word.utf8Start, bytes.baseAddress.map { $0 + index } ?? UnsafeRawPointer(word.utf8Start), count) == 0
        else { throw error("unexpected \(describeCurrent()), expected a value") }
        index += count
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of input" }
        let byte = bytes[index]
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private func error(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, reason: reason) }

    private static func invalidUTF8Offset(_ slice: UnsafeRawBufferPointer) -> Int {
        var iterator = slice.makeIterator()
        var decoder = UTF8()
        var offset = 0
        var consumed = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                consumed += UTF8.width(scalar)
                offset = consumed
            case .emptyInput: return offset
            case .error: return offset
            }
        }
    }
}
