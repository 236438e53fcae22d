import FerryCore
import FerryJSON
import Testing

/// The word-at-a-time string stepping agrees with looking at each byte, at every position and alignment.
@Suite struct JSONStringBytesTests {
    /// What the word tests promise, byte by byte.
    private static func needsEscape(_ byte: UInt8) -> Bool { byte == 0x22 || byte == 0x5C || byte < 0x20 }

    private static func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    @Test func wordTestsAgreeWithEveryByteInEveryPlace() {
        var generator = SystemRandomNumberGenerator()
        // Every byte value in every place of words whose other bytes are plain, ASCII or not: the borrows of the
        // subtractions must neither hide a byte nor invent one.
        for fill: UInt8 in [0x61, 0xFF, 0x80, 0x21, 0x5D, 0x23, 0x20, 0x7F] {
            for place in 0..<8 {
                for value in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: fill, count: 8)
                    bytes[place] = value
                    let word = Self.word(bytes)
                    #expect(JSONStringBytes.needsEscape(word) == bytes.contains(where: Self.needsEscape), "\(bytes)")
                    #expect(JSONStringBytes.hasNonASCII(word) == bytes.contains { $0 >= 0x80 }, "\(bytes)")
                }
            }
        }
        for _ in 0..<200_000 {
            let bytes = (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            #expect(JSONStringBytes.needsEscape(Self.word(bytes)) == bytes.contains(where: Self.needsEscape), "\(bytes)")
        }
    }

    @Test func skipsWholePlainWordsOnly() {
        let text = Array("0123456789abcdef0123456789".utf8)
        for special: UInt8 in [0x22, 0x5C, 0x0A, 0xC3] {
            for place in 0..<text.count {
                var bytes = text
                bytes[place] = special
                for asciiOnly in [false, true] {
                    let stops = special != 0xC3 || asciiOnly
                    let result = bytes.withUnsafeBytes { JSONStringBytes.skipPlainWords($0, from: 1, asciiOnly: asciiOnly) }
                    // Whole words from offset 1; it stops at the word holding the byte, or where fewer than 8 are left.
                    let expected = stops && place >= 1 ? 1 + (place - 1) / 8 * 8 : 1 + (text.count - 1) / 8 * 8
                    #expect(result.offset == min(expected, 1 + (text.count - 1) / 8 * 8), "\(special) at \(place)")
                    #expect(result.nonASCII == (!stops && place >= 1 && place < result.offset), "\(special) at \(place)")
                }
            }
        }
    }

    /// A string of `length` plain bytes with `special` at `place`, read by the scanner's three string paths: each
    /// ends or fails where reading byte by byte would.
    @Test(arguments: [UInt8(0x22), 0x5C, 0x01, 0x1F, 0xC3, 0xFF, 0x7F])
    func scannerStringsEndWhereByteByByteReadingDoes(special: UInt8) {
        for length in 1..<40 {
            for place in 0..<length {
                var body = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                body[place] = special
                // A backslash escapes an n, and a lead byte gets its continuation, where there is room.
                if special == 0x5C, place + 1 < length { body[place + 1] = UInt8(ascii: "n") }
                if special == 0xC3, place + 1 < length { body[place + 1] = 0xA9 }
                let json = [UInt8(ascii: "\"")] + body + [UInt8(ascii: "\"")]
                let expected = Self.expected(special: special, place: place, length: length)
                json.withUnsafeBytes { input in
                    var raw = JSONScanner(input)
                    var skipped = JSONScanner(input)
                    var built = JSONScanner(input)
                    let results: [(String, Result<String?, JSONSyntaxError>, Int)] = [
                        ("rawString", Result { () throws(JSONSyntaxError) in try raw.rawString().string }, 0),
                        ("skipValue", Result { () throws(JSONSyntaxError) in try skipped.skipValue() }.map { nil }, 1),
                        ("string", Result { () throws(JSONSyntaxError) in try built.string() }, 2),
                    ]
                    let ends = [raw.offset, skipped.offset, built.offset]
                    for (path, result, index) in results {
                        switch (expected, result) {
                        case (.text(let text, let end), .success(let read)):
                            #expect(read == nil || read == text, "\(path) of \(json)")
                            #expect(ends[index] == end, "\(path) of \(json)")
                        case (.error(let offset), .failure(let error)):
                            #expect(error.offset == offset, "\(path) of \(json): \(error)")
                        default:
                            Issue.record("\(path) of \(json): \(result), expected \(expected)")
                        }
                    }
                }
            }
        }
    }

    private enum Expected {
        case text(String, end: Int)
        case error(at: Int)
    }

    private static func expected(special: UInt8, place: Int, length: Int) -> Expected {
        let before = String(repeating: "x", count: place)
        func after(_ used: Int) -> String { String(repeating: "x", count: max(length - place - used, 0)) }
        switch special {
        case 0x22: return .text(before, end: place + 2)
        // A backslash just before the closing quote escapes it: the string never ends.
        case 0x5C: return place + 1 < length ? .text(before + "\n" + after(2), end: length + 2) : .error(at: 0)
        case 0xC3: return place + 1 < length ? .text(before + "é" + after(2), end: length + 2) : .error(at: place + 1)
        case 0x7F: return .text(before + "\u{7F}" + after(1), end: length + 2)
        default: return .error(at: place + 1)
        }
    }
}

/// ``JSONStringBytes/plainContentEnd(_:from:)`` agrees with a byte-by-byte reading of its promise on strings mixing
/// ASCII, multi-byte characters, broken sequences, quotes, backslashes and control bytes, at every start.
@Suite struct PlainContentEndTests {
    /// The promise, read plainly: the first quote, if nothing before it needs an escape and all before it is UTF-8.
    static func reference(_ bytes: [UInt8], from start: Int) -> Int? {
        guard let quote = bytes[start...].firstIndex(of: 0x22) else { return nil }
        let content = bytes[start..<quote]
        guard !content.contains(where: { $0 == 0x5C || $0 < 0x20 }) else { return nil }
        return String(validating: content, as: UTF8.self) == nil ? nil : quote
    }

    @Test func agreesWithTheReference() {
        var generator = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [
            Array("plain words ".utf8), Array("ünïcødé".utf8), Array("✓".utf8), Array("😀".utf8), [0x22], [0x5C], [0x0A], [0x7F],
            [0xC3], [0xE2, 0x9C], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0x80], Array("01234567".utf8),
        ]
        for _ in 0..<4_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                // Plain text mostly, so that the interesting bytes land at every offset of a word.
                let piece = Int.random(in: 0..<4, using: &generator) == 0 ? pieces.randomElement(using: &generator) ?? [] : pieces[0]
                bytes += piece.prefix(Int.random(in: 1...piece.count, using: &generator))
            }
            for start in 0...bytes.count {
                let found = bytes.withUnsafeBytes { JSONStringBytes.plainContentEnd($0, from: start) }
                #expect(found == Self.reference(bytes, from: start), "\(bytes) from \(start)")
            }
        }
    }
}
