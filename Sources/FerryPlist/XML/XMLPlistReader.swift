import FerryCore
import Foundation

/// Reads XML property lists (`<plist version="1.0">…`) into a ``PlistTable``.
///
/// In keyed archives written as XML, a dictionary `{CF$UID: n}` is a UID, as Foundation writes it.
enum XMLPlistReader {
    /// Parses an XML plist.
    /// - Throws: ``PlistError`` with the byte offset of the problem.
    static func read(_ bytes: [UInt8]) throws(PlistError) -> PlistTable {
        var reader = Reader(scanner: XMLScanner(bytes))
        do {
            return try reader.document()
        } catch let error as PlistError {
            throw error
        } catch let error as XMLScanner.SyntaxError {
            throw PlistError(.malformed, at: error.offset, "XML: \(error.reason)")
        } catch {
            throw PlistError(.malformed, "XML: \(error)")
        }
    }

    private struct Reader {
        var scanner: XMLScanner
        var table = PlistTable()
        var pending: XMLScanner.Token?

        mutating func next() throws -> XMLScanner.Token? {
            if let token = pending {
                pending = nil
                return token
            }
            while let token = try scanner.next() {
                if case .text(let text) = token, text.allSatisfy(\.isWhitespace) { continue }
                return token
            }
            return nil
        }

        mutating func document() throws -> PlistTable {
            guard case .start(let name, _, let selfClosing)? = try next() else {
                throw PlistError(.notAPlist, at: 0, "no root element")
            }
            if name == "plist" {
                guard !selfClosing else { throw PlistError(.malformed, at: scanner.offset, "empty <plist/>") }
                let root = try value()
                guard case .end(name: "plist")? = try next() else {
                    throw PlistError(.malformed, at: scanner.offset, "<plist> holds more than one value")
                }
                table.topObject = root
            } else {
                pending = .start(name: name, attributes: [], selfClosing: selfClosing)
                table.topObject = try value()
            }
            guard try next() == nil else { throw PlistError(.malformed, at: scanner.offset, "content after the root element") }
            return table
        }

        /// Reads one value element and returns its object index.
        mutating func value() throws -> Int {
            let offset = scanner.offset
            guard case .start(let name, _, let selfClosing)? = try next() else {
                throw PlistError(.malformed, at: offset, "expected a value element")
            }
            switch name {
            case "dict": return try dictionary(selfClosing: selfClosing)
            case "array":
                var elements: [Int] = []
                if !selfClosing {
                    while true {
                        if case .end(name: "array")? = try peekEnd() { break }
                        elements.append(try value())
                    }
                }
                if selfClosing { _ = try next() }
                return table.add(.array(elements))
            case "true", "false":
                let text = try content(of: name, selfClosing: selfClosing)
                guard text.isEmpty else { throw PlistError(.malformed, at: offset, "<\(name)> has content") }
                return table.add(.bool(name == "true"))
            case "string":
                return table.add(.string(try content(of: name, selfClosing: selfClosing)))
            case "integer":
                let text = try content(of: name, selfClosing: selfClosing).trimmingCharacters(in: .whitespacesAndNewlines)
                guard let number = Self.integer(text) else {
                    throw PlistError(.malformed, at: offset, "<integer> \"\(text)\" is not a 64-bit integer")
                }
                return table.add(.integer(number))
            case "real":
                let text = try content(of: name, selfClosing: selfClosing).trimmingCharacters(in: .whitespacesAndNewlines)
                guard let number = Double(text) else { throw PlistError(.malformed, at: offset, "<real> \"\(text)\" is not a number") }
                return table.add(.real(number))
            case "date":
                let text = try content(of: name, selfClosing: selfClosing).trimmingCharacters(in: .whitespacesAndNewlines)
                guard let date = Self.date(text) else { throw PlistError(.malformed, at: offset, "<date> \"\(text)\" is not an ISO 8601 UTC date") }
                return table.add(.date(date))
            case "data":
                let text = try content(of: name, selfClosing: selfClosing).filter { !$0.isWhitespace }
                guard let data = Data(base64Encoded: text) else { throw PlistError(.malformed, at: offset, "<data> is not base64") }
                return table.add(.data(Array(data)))
            default:
                throw PlistError(.malformed, at: offset, "unknown plist element <\(name)>")
            }
        }

        mutating func dictionary(selfClosing: Bool) throws -> Int {
            var keys: [Int] = []
            var values: [Int] = []
            var names: [String] = []
            if selfClosing {
                _ = try next()
            } else {
                while true {
                    let offset = scanner.offset
                    guard let token = try next() else { throw PlistError(.malformed, at: offset, "document ends inside <dict>") }
                    if case .end(name: "dict") = token { break }
                    guard case .start(name: "key", _, let keyClosing) = token else {
                        throw PlistError(.malformed, at: offset, "expected <key> in <dict>")
                    }
                    let name = try content(of: "key", selfClosing: keyClosing)
                    guard !names.contains(name) else { throw PlistError(.malformed, at: offset, "key \"\(name)\" appears twice in a <dict>") }
                    names.append(name)
                    keys.append(table.add(.string(name)))
                    values.append(try value())
                }
            }
            // Foundation writes keyed-archive references as {CF$UID: n}.
            if names == ["CF$UID"], let value = values.first, case .integer(let uid) = table.nodes[value], uid >= 0,
                uid <= Int64(Int32.max)
            {
                return table.add(.uid(Int(uid)))
            }
            return table.add(.dictionary(keys: keys, values: values))
        }

        /// The text of a simple element up to its end tag.
        mutating func content(of name: String, selfClosing: Bool) throws -> String {
            var text = ""
            while let token = try scanner.next() {
                switch token {
                case .text(let part): text += part
                case .end(let end) where end == name: return text
                default: throw PlistError(.malformed, at: scanner.offset, "<\(name)> may only hold text")
                }
            }
            throw PlistError(.malformed, at: scanner.offset, "document ends inside <\(name)>")
        }

        mutating func peekEnd() throws -> XMLScanner.Token? {
            let token = try next()
            if case .end = token { return token }
            pending = token
            return nil
        }

        static func integer(_ text: String) -> Int64? {
            if text.hasPrefix("0x") || text.hasPrefix("0X") { return Int64(text.dropFirst(2), radix: 16) }
            if text.hasPrefix("-0x") || text.hasPrefix("-0X") { return Int64(text.dropFirst(3), radix: 16).map { -$0 } }
            if text.hasPrefix("+") { return Int64(text.dropFirst()) }
            return Int64(text)
        }

        /// `2001-01-01T00:00:00Z` → seconds since 2001.
        static func date(_ text: String) -> Double? {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            guard let date = formatter.date(from: text) else { return nil }
            return date.timeIntervalSinceReferenceDate
        }
    }
}
