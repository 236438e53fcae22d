import Foundation

/// Reads OpenStep ("ASCII") property lists into a ``PlistTable``.
///
/// The format looks like `{ key = value; list = (a, "b c"); data = <0fbd 77>; }` and has only strings, arrays,
/// dictionaries and data.
enum OpenStepPlistReader {
    /// Parses an OpenStep plist.
    /// - Throws: ``PlistError`` with the byte offset of the problem.
    static func read(_ bytes: [UInt8]) throws(PlistError) -> PlistTable {
        var reader = Reader(bytes: bytes)
        let top = try reader.value(depth: 0)
        try reader.skipSpace()
        guard reader.offset == bytes.count else { throw PlistError(.malformed, at: reader.offset, "content after the top value") }
        reader.table.topObject = top
        return reader.table
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        var table = PlistTable()

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
        }

        mutating func value(depth: Int) throws(PlistError) -> Int {
            guard depth < 512 else { throw PlistError(.tooDeep, at: offset, "nesting deeper than 512 levels") }
            try skipSpace()
            guard offset < bytes.count else { throw PlistError(.malformed, at: offset, "unexpected end, expected a value") }
            switch bytes[offset] {
            case UInt8(ascii: "{"):
                offset += 1
                var keys: [Int] = []
                var values: [Int] = []
                while true {
                    try skipSpace()
                    guard offset < bytes.count else { throw PlistError(.malformed, at: offset, "unterminated dictionary") }
                    if bytes[offset] == UInt8(ascii: "}") {
                        offset += 1
                        return table.add(.dictionary(keys: keys, values: values))
                    }
                    let key = try string()
                    try expect(UInt8(ascii: "="))
                    keys.append(key)
                    values.append(try value(depth: depth + 1))
                    try expect(UInt8(ascii: ";"))
                }
            case UInt8(ascii: "("):
                offset += 1
                var elements: [Int] = []
                while true {
                    try skipSpace()
                    guard offset < bytes.count else { throw PlistError(.malformed, at: offset, "unterminated array") }
                    if bytes[offset] == UInt8(ascii: ")") {
                        offset += 1
                        return table.add(.array(elements))
                    }
                    elements.append(try value(depth: depth + 1))
                    try skipSpace()
                    if offset < bytes.count, bytes[offset] == UInt8(ascii: ",") { offset += 1 }
                }
            case UInt8(ascii: "<"):
                offset += 1
                var data: [UInt8] = []
                var high: UInt8?
                while offset < bytes.count, bytes[offset] != UInt8(ascii: ">") {
                    let byte = bytes[offset]
                    offset += 1
                    if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D { continue }
                    guard let nibble = Self.hex(byte) else { throw PlistError(.malformed, at: offset - 1, "invalid hex digit in data") }
                    if let first = high {
                        data.append(first << 4 | nibble)
                        high = nil
                    } else {
                        high = nibble
                    }
                }
                guard offset < bytes.count, high == nil else { throw PlistError(.malformed, at: offset, "unterminated or odd-length data") }
                offset += 1
                return table.add(.data(data))
            default:
                return try string()
            }
        }

        /// A quoted or unquoted string; returns its object index.
        mutating func string() throws(PlistError) -> Int {
            try skipSpace()
            guard offset < bytes.count else { throw PlistError(.malformed, at: offset, "unexpected end, expected a string") }
            if bytes[offset] == UInt8(ascii: "\"") || bytes[offset] == UInt8(ascii: "'") {
                let quote = bytes[offset]
                let start = offset
                offset += 1
                var output: [UInt8] = []
                while offset < bytes.count, bytes[offset] != quote {
                    if bytes[offset] == UInt8(ascii: "\\"), offset + 1 < bytes.count {
                        offset += 1
                        switch bytes[offset] {
                        case UInt8(ascii: "n"): output.append(0x0A)
                        case UInt8(ascii: "t"): output.append(0x09)
                        case UInt8(ascii: "r"): output.append(0x0D)
                        default: output.append(bytes[offset])
                        }
                    } else {
                        output.append(bytes[offset])
                    }
                    offset += 1
                }
                guard offset < bytes.count else { throw PlistError(.malformed, at: start, "unterminated string") }
                offset += 1
                guard let text = String(validating: output, as: UTF8.self) else {
                    throw PlistError(.malformed, at: start, "invalid UTF-8 in a string")
                }
                return table.add(.string(text))
            }
            let start = offset
            while offset < bytes.count, Self.isUnquoted(bytes[offset]) { offset += 1 }
            guard offset > start else { throw PlistError(.malformed, at: offset, "expected a string") }
            return table.add(.string(String(decoding: bytes[start..<offset], as: UTF8.self)))
        }

        mutating func skipSpace() throws(PlistError) {
            while offset < bytes.count {
                let byte = bytes[offset]
                if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D {
                    offset += 1
                } else if byte == UInt8(ascii: "/"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "/") {
                    while offset < bytes.count, bytes[offset] != 0x0A { offset += 1 }
                } else if byte == UInt8(ascii: "/"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "*") {
                    let start = offset
                    offset += 2
                    while offset + 1 < bytes.count, !(bytes[offset] == UInt8(ascii: "*") && bytes[offset + 1] == UInt8(ascii: "/")) { offset += 1 }
                    guard offset + 1 < bytes.count else { throw PlistError(.malformed, at: start, "unterminated comment") }
                    offset += 2
                } else {
                    return
                }
            }
        }

        mutating func expect(_ character: UInt8) throws(PlistError) {
            try skipSpace()
            guard offset < bytes.count, bytes[offset] == character else {
                throw PlistError(.malformed, at: offset, "expected '\(Character(Unicode.Scalar(character)))'")
            }
            offset += 1
        }

        static func isUnquoted(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || [
                    UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"),
                    UInt8(ascii: "."), UInt8(ascii: "-"),
                ].contains(byte)
        }

        static func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
    }
}
