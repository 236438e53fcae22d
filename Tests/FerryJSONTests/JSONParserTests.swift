import FerryCore
import FerryJSON
import Foundation
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#"{"a":[1,-2,3.5,true,false,null,"x"],"b":{"c":"d"}}"#)
        #expect(value == ["a": [1, -2, 3.5, true, false, nil, "x"], "b": ["c": "d"]])
    }

    @Test func keepsSixtyFourBitIntegersExact() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(Int64.min))
        // Above Int64.max: exact up to UInt64.max, then a double; never a wrapped integer.
        #expect(try JSONParser.parse("9223372036854775808") == .unsigned(9_223_372_036_854_775_808))
        #expect(try JSONParser.parse("18446744073709551615") == .unsigned(UInt64.max))
        #expect(try JSONParser.parse("18446744073709551616") == .number(18_446_744_073_709_551_616))
        #expect(JSONWriter.canonical(.unsigned(UInt64.max)) == Array("18446744073709551615".utf8))
        #expect(try JSONParser.parse("1e2") == .number(100))
        #expect(try JSONParser.parse("-0") == .integer(0))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try JSONParser.parse(#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud834\udd1e""#)
        #expect(value == .string("a\"b\\c/d\u{8}\u{c}\n\r\té𝄞"))
    }

    @Test(arguments: [
        ("", 0, "unexpected end of input"),
        ("{\"a\":1,}", 7, "expected a string key"),
        ("[1 2]", 3, "expected ',' or ']'"),
        ("01", 1, "leading zero"),
        ("\"abc", 0, "unterminated string"),
        ("\"a\u{1}\"", 2, "unescaped control character"),
        ("\"\\ud800\"", 7, "lone high surrogate"),
        ("\"\\udc00\"", 7, "lone low surrogate"),
        ("\"\\x\"", 2, "invalid escape"),
        ("{\"a\":1,\"a\":2}", 7, "duplicate key"),
        ("[1] x", 4, "after the end of the document"),
        ("tru", 0, "expected true or false"),
        ("1.", 2, "expected a digit after '.'"),
        ("1e999", 0, "out of range"),
    ])
    func refusesMalformedDocumentsWithTheOffset(text: String, offset: Int, reason: String) {
        #expect {
            _ = try JSONParser.parse(text)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.offset == offset && error.reason.contains(reason)
        }
    }

    @Test func refusesInvalidUTF8InStrings() {
        let bytes: [UInt8] = [0x22, 0x61, 0xC3, 0x28, 0x22]  // "a\xC3(" — a broken two-byte sequence
        #expect {
            _ = try JSONParser.parse(bytes)
        } throws: { error in
            (error as? JSONSyntaxError)?.reason.contains("invalid UTF-8") == true && (error as? JSONSyntaxError)?.offset == 2
        }
    }

    @Test func limitsNestingDepth() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try JSONParser.parse(fine) }
    }

    @Test func detectsDuplicateKeysInLargeObjects() throws {
        let members = (0..<40).map { "\"k\($0)\":\($0)" } + ["\"k3\":0"]
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse("{" + members.joined(separator: ",") + "}") }
    }
}

@Suite struct JSONWriterTests {
    @Test func writesCanonicalFormWithKeysInByteOrder() throws {
        let value: JSONValue = ["b": 1, "a": ["z": true, "Z": nil], "é": "x", "A": [1.5, -0.25, 1e-7]]
        let text = String(decoding: JSONWriter.canonical(value), as: UTF8.self)
        #expect(text == #"{"A":[1.5,-0.25,1e-07],"a":{"Z":null,"z":true},"b":1,"é":"x"}"#)
    }

    @Test func escapesOnlyWhatJSONRequires() {
        var writer = JSONWriter()
        writer.string("quote\" back\\ slash/ tab\t nl\n ctl\u{1} é 𝄞")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""quote\" back\\ slash/ tab\t nl\n ctl\u0001 é 𝄞""#)
    }

    @Test(arguments: [Int64.min, -1, 0, 7, 1_000_000, Int64.max])
    func writesIntegersExactly(value: Int64) {
        var writer = JSONWriter()
        writer.integer(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
    }

    @Test func roundTripsThroughTheParser() throws {
        let value: JSONValue = ["s": "ü\n", "n": [.integer(Int64.max), .number(0.1), .number(-3e100)], "o": ["x": []]]
        #expect(try JSONParser.parse(JSONWriter.canonical(value)) == value)
        #expect(try JSONParser.parse(JSONWriter.prettyText(value)) == value)
    }

    @Test(arguments: [0, 1, 3])
    func streamsAnArrayMemberAsPrettyWouldWriteIt(count: Int) throws {
        let elements: [JSONValue] = (0..<count).map { ["n": .integer(Int64($0)), "z": ["a": [], "b": "x"]] }
        let others: JSONObject = ["zeta": 1, "alpha": ["k": true], "files": "replaced"]
        var whole = others
        whole["files"] = .array(elements)
        var expected = JSONWriter()
        expected.pretty(.object(whole), indent: 1)
        var streamed = JSONWriter()
        try streamed.pretty(others, indent: 1, streaming: "files", flushEvery: .max, flush: { _ in }) { add in
            for element in elements { try add(element) }
        }
        #expect(streamed.bytes == expected.bytes)
        // Handed over in pieces as it goes, the same bytes in the end.
        var pieces: [[UInt8]] = []
        var flushed = JSONWriter()
        try flushed.pretty(others, indent: 1, streaming: "files", flushEvery: 16, flush: { pieces.append($0) }) { add in
            for element in elements { try add(element) }
        }
        #expect(pieces.allSatisfy { $0.count >= 16 } && pieces.count == (count > 0 ? count : 0))
        #expect(pieces.joined() + flushed.bytes == expected.bytes)
    }

    @Test func neverWritesNonFiniteNumbers() {
        var writer = JSONWriter()
        writer.double(.nan)
        writer.byte(UInt8(ascii: ","))
        writer.double(.infinity)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "null,null")
    }

    @Test func aStringFromItsBytesIsEscapedAsFromAString() throws {
        let texts = ["", "plain", "quote \" back\\slash", "\n\t\r\u{8}\u{C}\u{0}\u{1F}", "é ☃ \u{1F600}", String(repeating: "a\"", count: 300)]
        for text in texts {
            var fromString = JSONWriter(capacity: 16)
            fromString.string(text)
            var fromBytes = JSONWriter(capacity: 16)
            Array(text.utf8).withUnsafeBytes { fromBytes.string(utf8: $0) }
            #expect(fromBytes.bytes == fromString.bytes, "\(text.debugDescription)")
            #expect(try JSONParser.parse(fromBytes.bytes) == .string(text))
        }
    }
}

@Suite struct JSONWriterBase64Tests {
    @Test func writesTheSameBase64AsFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for length in Array(0...9) + [57, 58, 59, 300, 4096] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var writer = JSONWriter()
            writer.base64(bytes)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"\(Data(bytes).base64EncodedString())\"")
        }
    }
}
