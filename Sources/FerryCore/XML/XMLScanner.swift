/// A small, strict XML tokenizer for the XML Ferry reads: property lists and Core Data model files.
///
/// Written by hand rather than using FoundationXML (libxml2) so that errors carry byte offsets and no document type
/// definition is ever honoured: a DOCTYPE is skipped, entity definitions are never expanded (no "billion laughs",
/// no external entities), and only the five predefined entities and character references are understood.
/// Input must be UTF-8. Element nesting is checked and limited.
public struct XMLScanner {
    /// One piece of a document.
    public enum Token: Sendable, Hashable {
        /// `<name a="1">`, or `<name/>` when `selfClosing`.
        case start(name: String, attributes: [Attribute], selfClosing: Bool)
        /// `</name>` (also produced after a self-closing start).
        case end(name: String)
        /// Character data with entities decoded (CDATA sections included).
        case text(String)
    }

    /// An attribute.
    public struct Attribute: Sendable, Hashable {
        /// The attribute's name.
        public var name: String
        /// Its value, entities decoded.
        public var value: String
    }

    /// Why a document is not well-formed XML, and where.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The byte offset.
        public var offset: Int
        /// What is wrong.
        public var reason: String
        public var description: String { "at byte \(offset): \(reason)" }
    }

    private let bytes: [UInt8]
    /// The offset of the next byte.
    public private(set) var offset = 0
    private var open: [String] = []
    private var pendingEnd: String?
    private let maxDepth: Int

    /// Scans a UTF-8 document.
    public init(_ bytes: [UInt8], maxDepth: Int = 512) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { offset = 3 }
    }

    /// The depth of the element being read (0 outside the root).
    public var depth: Int { open.count }

    /// The next token, or `nil` at the end of the document.
    public mutating func next() throws(SyntaxError) -> Token? {
        if let name = pendingEnd {
            pendingEnd = nil
            return .end(name: name)
        }
        while offset < bytes.count {
            if bytes[offset] != UInt8(ascii: "<") {
                let text = try readText()
                if open.isEmpty {
                    guard text.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) else {
                        throw error("text outside the root element")
                    }
                    continue
                }
                return .text(text)
            }
            if starts(with: "<?") {
                try skip(past: "?>")
            } else if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw error("CDATA outside the root element") }
                offset += 9
                let start = offset
                try skip(past: "]]>")
                return .text(try decodeUTF8(start..<(offset - 3)))
            } else if starts(with: "<!DOCTYPE") {
                try skipDoctype()
            } else if starts(with: "</") {
                offset += 2
                let name = try readName()
                skipSpaces()
                try expect(">")
                guard let last = open.popLast() else { throw error("closing tag </\(name)> without an open element") }
                guard last == name else { throw error("closing tag </\(name)> does not match <\(last)>") }
                return .end(name: name)
            } else {
                return try readStart()
            }
        }
        guard open.isEmpty else { throw error("document ends inside <\(open.last ?? "")>") }
        return nil
    }

    // MARK: - Pieces

    private mutating func readStart() throws(SyntaxError) -> Token {
        offset += 1
        let name = try readName()
        var attributes: [Attribute] = []
        while true {
            skipSpaces()
            guard offset < bytes.count else { throw error("document ends inside the tag <\(name)>") }
            if bytes[offset] == UInt8(ascii: ">") {
                offset += 1
                guard open.count < maxDepth else { throw error("elements nest deeper than \(maxDepth) levels") }
                open.append(name)
                return .start(name: name, attributes: attributes, selfClosing: false)
            }
            if starts(with: "/>") {
                offset += 2
                pendingEnd = name
                return .start(name: name, attributes: attributes, selfClosing: true)
            }
            let attribute = try readName()
            skipSpaces()
            try expect("=")
            skipSpaces()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") || bytes[offset] == UInt8(ascii: "'") else {
                throw error("expected a quoted value for attribute \(attribute)")
            }
            let quote = bytes[offset]
            offset += 1
            let start = offset
            while offset < bytes.count, bytes[offset] != quote {
                if bytes[offset] == UInt8(ascii: "<") { throw error("'<' in an attribute value") }
                offset += 1
            }
            guard offset < bytes.count else { throw error("unterminated attribute value") }
            let value = try decodeEntities(start..<offset)
            offset += 1
            if attributes.contains(where: { $0.name == attribute }) { throw error("attribute \(attribute) appears twice") }
            attributes.append(Attribute(name: attribute, value: value))
        }
    }

    private mutating func readText() throws(SyntaxError) -> String {
        let start = offset
        while offset < bytes.count, bytes[offset] != UInt8(ascii: "<") { offset += 1 }
        return try decodeEntities(start..<offset)
    }

    private mutating func readName() throws(SyntaxError) -> String {
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            let isNameByte =
                byte >= 0x80 || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte == 0x3A || byte == 0x2D || byte == 0x2E
            if !isNameByte { break }
            offset += 1
        }
        guard offset > start else { throw error("expected a name") }
        return try decodeUTF8(start..<offset)
    }

    private mutating func skipDoctype() throws(SyntaxError) {
        // Skipped, internal subset included; nothing in it is honoured.
        var depth = 0
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0:
                offset += 1
                return
            default: break
            }
            offset += 1
        }
        throw error("unterminated DOCTYPE")
    }

    private func decodeUTF8(_ range: Range<Int>) throws(SyntaxError) -> String {
        guard let text = String(validating: bytes[range], as: UTF8.self) else {
            throw SyntaxError(offset: range.lowerBound, reason: "invalid UTF-8 (Ferry reads UTF-8 XML only)")
        }
        return text
    }

    private func decodeEntities(_ range: Range<Int>) throws(SyntaxError) -> String {
        guard bytes[range].contains(UInt8(ascii: "&")) else { return try decodeUTF8(range) }
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "&") else {
                output.append(byte)
                index += 1
                continue
            }
            guard let semicolon = bytes[index..<range.upperBound].firstIndex(of: UInt8(ascii: ";")), semicolon - index <= 12 else {
                throw SyntaxError(offset: index, reason: "unterminated entity reference")
            }
            let name = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "amp": output.append(UInt8(ascii: "&"))
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                let number: UInt32?
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    number = UInt32(name.dropFirst(2), radix: 16)
                } else if name.hasPrefix("#") {
                    number = UInt32(name.dropFirst())
                } else {
                    throw SyntaxError(offset: index, reason: "unknown entity &\(name); (entity definitions are not supported)")
                }
                guard let number, let scalar = Unicode.Scalar(number), number != 0 else {
                    throw SyntaxError(offset: index, reason: "invalid character reference &\(name);")
                }
                output.append(contentsOf: Array(String(scalar).utf8))
            }
            index = semicolon + 1
        }
        guard let text = String(validating: output, as: UTF8.self) else {
            throw SyntaxError(offset: range.lowerBound, reason: "invalid UTF-8 (Ferry reads UTF-8 XML only)")
        }
        return text
    }

    private func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        for index in 0..<count where bytes[offset + index] != text.utf8Start[index] { return false }
        return true
    }

    private mutating func skip(past terminator: StaticString) throws(SyntaxError) {
        let start = offset
        while offset < bytes.count {
            if starts(with: terminator) {
                offset += terminator.utf8CodeUnitCount
                return
            }
            offset += 1
        }
        throw SyntaxError(offset: start, reason: "unterminated \(String(decoding: bytes[start..<min(start + 4, bytes.count)], as: UTF8.self))…")
    }

    private mutating func skipSpaces() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    private mutating func expect(_ character: Character) throws(SyntaxError) {
        guard offset < bytes.count, let ascii = character.asciiValue, bytes[offset] == ascii else {
            throw error("expected '\(character)'")
        }
        offset += 1
    }

    private func error(_ reason: String) -> SyntaxError { SyntaxError(offset: offset, reason: reason) }
}
