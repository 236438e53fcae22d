import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// Lines prepared through the shape of a line seen before (``RecordLineShape``) must be prepared exactly as decoding
/// them prepares them, whatever values they hold; the values a shape cannot vouch for are left to the full path.
@Suite struct LineShapeTests {
    static let oracle = TranscodeOracle()

    /// Model lines with a placeholder where each value goes, and the model's values.
    static let models: [(template: String, values: [String: String])] = [
        // As Python's json.dumps writes the bench input: spaces, value before type.
        (
            #"{"recordName": "@N", "recordType": "Car", "zoneID": {"zoneName": "CarZone", "ownerRecordName": "__defaultOwner__"}, "fields": {"name": {"value": "@S", "type": "STRING"}, "added": {"value": @I, "type": "TIMESTAMP"}, "mileage": {"value": @J, "type": "INT64"}, "rating": {"value": @D, "type": "DOUBLE"}}}"#,
            ["@N": "Car.1", "@S": "Car 0", "@I": "1479340800000", "@J": "953631", "@D": "0.7192432165945845"]
        ),
        // Compact, type before value, references (one DELETE_SELF), a list of strings, fields out of order.
        (
            #"{"recordType":"Note","recordName":"@N","zoneID":{"zoneName":"CarZone"},"fields":{"text":{"type":"STRING","value":"@S"},"parent":{"type":"REFERENCE","value":{"recordName":"@R","action":"DELETE_SELF"}},"other":{"type":"REFERENCE","value":{"action":"NONE","recordName":"@Q"}},"tags":{"type":"STRING_LIST","value":["@A","@B"]}}}"#,
            ["@N": "Note.1", "@S": "hello", "@R": "Car.1", "@Q": "Car.2", "@A": "a", "@B": "b"]
        ),
        // The canonical form itself, with system fields and lists of numbers, in the default zone.
        (
            #"{"created":{"timestamp":@C,"userRecordName":"@U"},"fields":{"a":{"type":"DOUBLE","value":@D},"b":{"type":"INT64","value":@J},"c":{"type":"INT64_LIST","value":[@K,@L]},"d":{"type":"DOUBLE_LIST","value":[@E]}},"modified":{"timestamp":@M,"userRecordName":"@U"},"recordChangeTag":"@G","recordName":"@N","recordType":"T","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"_defaultZone"}}"#,
            [
                "@N": "T.1", "@D": "2.5", "@J": "-3", "@C": "1", "@M": "2", "@U": "_u", "@G": "t1", "@K": "4", "@L": "5", "@E": "6.5",
            ]
        ),
        // As PostgreSQL writes a jsonb object (spaces, shorter keys first) inside a record written around it.
        (
            #"{"created":{"timestamp":@C},"fields":{"car": {"type": "REFERENCE", "value": {"action": "DELETE_SELF", "zoneID": {"zoneName": "CarZone", "ownerRecordName": "__defaultOwner__"}, "recordName": "@R"}}, "tags": {"type": "STRING_LIST", "value": ["@A", "@B"]}, "added": {"type": "TIMESTAMP", "value": @I}},"modified":{"timestamp":@M},"recordChangeTag":"@G","recordName":"@N","recordType":"Note","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            [
                "@N": "Note.1", "@R": "Car.1", "@A": "Tag.1", "@B": "Tag.2", "@I": "1686395893861", "@C": "1795749842304", "@M": "1795749842305",
                "@G": "255t",
            ]
        ),
    ]

    /// What each kind of value is replaced with: valid values, values to rewrite, values to refuse.
    static let substitutes: [String: [String]] = [
        "@N": ["Car.2", "x y", "Car.1", "_hidden", "", "Car.ü", String(repeating: "a", count: 256), #"a\"b"#, #"a\u0041"#, "a\u{7F}"],
        "@R": ["Car.9", "_bad", "", "ü", #"q\\r"#, String(repeating: "r", count: 255)],
        "@Q": ["Bus.3", "_bad"],
        "@S": [
            "", "ünïcødé ✓", #"tab\t"#, #"a\u0041"#, "\u{7F}", #"\"q\""#, String(repeating: "long ", count: 400), "\u{10FFFF}",
        ],
        "@I": [
            "0", "-0", "7", "-7", "007", "1.0", "1.5", "1e3", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "123456789012345678", "1234567890123456789", "+1", "1e400", "-", "1.", ".5", "0x10", "1 ",
        ],
        "@J": ["0", "-5", "2.0", "3e2", "99999999999999999999"],
        "@D": ["0", "-0", "0.5", "1e-7", "1E+300", "1e400", "-0.0", "3", "12345678901234567890", "0.1", "5e-324", "1e", "--1"],
        "@A": ["", "ünïcødé ✓", #"a\"b"#, String(repeating: "long ", count: 400), "x"],
        "@B": ["", #"tab\t"#, "Tag.3"],
        "@C": ["0", "-7", "1.0", "1.5", "9223372036854775808", "1e3", "x", "1795749842304"],
        "@M": ["-0", "007", "1e400", "3"],
        "@U": ["", "_other", #"a\"b"#, "ü", "\u{7F}"],
        "@G": ["", "t2", #"a\u0041"#, "ünï", String(repeating: "g", count: 300)],
        "@K": ["0", "-5", "2.0", "99999999999999999999", "1.5"],
        "@L": ["9223372036854775807", "+1"],
        "@E": ["0", "-0.0", "1e400", "1e-7", "x"],
    ]

    private static func line(_ template: String, _ values: [String: String]) -> [UInt8] {
        var text = template
        for (placeholder, value) in values { text = text.replacingOccurrences(of: placeholder, with: value) }
        return Array(text.utf8)
    }

    @Test("every value in a learned shape is prepared as decoding prepares it, or left to decoding")
    func agreesWithDecodingWhateverTheValues() throws {
        for (template, modelValues) in Self.models {
            var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
            let model = Self.line(template, modelValues)
            #expect(model.withUnsafeBytes { lines.prepare($0) } != nil, "model \(template)")
            for placeholder in modelValues.keys.sorted() {
                for substitute in Self.substitutes[placeholder] ?? [] {
                    var values = modelValues
                    values[placeholder] = substitute
                    let line = Self.line(template, values)
                    let disagreement = Self.oracle.preparedDisagreement(line, lines: &lines)
                    #expect(disagreement == nil, "\(placeholder) = \(substitute): \(disagreement ?? "")")
                }
            }
            // Most substitutes are valid values of the model's shape.
            #expect(lines.shapedLines >= 10, "\(lines.shapedLines) lines through the shape of \(template)")
        }
    }

    @Test("lines that differ from a model only in their values are prepared through its shape")
    func preparesOrdinaryLinesThroughTheShape() throws {
        let (template, modelValues) = Self.models[1]
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        _ = Self.line(template, modelValues).withUnsafeBytes { lines.prepare($0) }
        #expect(lines.shapedLines == 0)
        let variants: [[String: String]] = [
            ["@N": "Note.2", "@S": "ünïcødé ✓", "@R": "Car.7", "@Q": "Car.8", "@A": "a", "@B": "b"],
            ["@N": "Note.3", "@S": "", "@R": "Car.1", "@Q": "Car.1", "@A": "a", "@B": "b"],
        ]
        for variant in variants {
            let line = Self.line(template, variant)
            #expect(Self.oracle.preparedDisagreement(line, lines: &lines) == nil)
        }
        #expect(lines.shapedLines == variants.count)
        // The first shape keeps the list as it was; a line with another list is decoded, and the second shape learned
        // from it takes the list's elements out, so lines with yet other lists go through it.
        let lists = [["@A": "c", "@B": "d"], ["@A": "e", "@B": ""], ["@A": "a", "@B": "b"]]
        for (index, list) in lists.enumerated() {
            let line = Self.line(template, variants[0].merging(list) { $1 })
            #expect(Self.oracle.preparedDisagreement(line, lines: &lines) == nil)
            #expect(lines.shapedLines == variants.count + index, "list \(index)")
        }
        // Another layout, whitespace or key order is another shape: decoded, then learned.
        let spaced = Self.line(template.replacingOccurrences(of: #""text":"#, with: #""text": "#), variants[0])
        #expect(Self.oracle.preparedDisagreement(spaced, lines: &lines) == nil)
        #expect(lines.shapedLines == variants.count + lists.count - 1)
    }

    @Test("a line that differs from the shape in any one byte between its values is not prepared through it")
    func comparesEveryLiteralByte() throws {
        for (template, modelValues) in Self.models {
            let model = Self.line(template, modelValues)
            let text = Array(template.utf8)
            // Every byte of the template but its placeholders (`@` and the letter after it), changed to another.
            var position = 0
            while position < text.count {
                if text[position] == UInt8(ascii: "@") {
                    position += 2
                    continue
                }
                var changed = text
                changed[position] = text[position] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
                var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
                #expect(model.withUnsafeBytes { lines.prepare($0) } != nil)
                let line = Self.line(String(decoding: changed, as: UTF8.self), modelValues)
                #expect(Self.oracle.preparedDisagreement(line, lines: &lines) == nil, "byte \(position) of \(template)")
                #expect(lines.shapedLines == 0, "byte \(position) changed, and the line went through the shape of \(template)")
                position += 1
            }
        }
    }

    @Test("with more shapes than it keeps, the least recently used goes, and every line is still prepared right")
    func forgetsTheLeastRecentlyUsedShape() throws {
        // Twelve record types, each line its own shape; the preparer keeps eight.
        let template =
            #"{"recordName":"@N","recordType":"@T","fields":{"n":{"type":"INT64","value":@J},"#
            + #""r":{"type":"REFERENCE","value":{"recordName":"@R","action":"DELETE_SELF"}}}}"#
        let types = (0..<12).map { "T\($0)" }
        func line(_ type: String, _ index: Int) -> [UInt8] {
            Self.line(template, ["@N": "\(type).\(index)", "@T": type, "@J": "\(index)", "@R": "P.\(index)"])
        }
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        // The first round learns every type's shape (the last eight are kept); then two rounds of the last eight
        // alternate through their shapes, and then the first four, forgotten, are decoded and learned again.
        for type in types { #expect(Self.oracle.preparedDisagreement(line(type, 0), lines: &lines) == nil) }
        #expect(lines.shapedLines == 0)
        for round in 1...2 {
            for type in types.suffix(8) { #expect(Self.oracle.preparedDisagreement(line(type, round), lines: &lines) == nil) }
        }
        #expect(lines.shapedLines == 16)
        for type in types.prefix(4) { #expect(Self.oracle.preparedDisagreement(line(type, 3), lines: &lines) == nil) }
        #expect(lines.shapedLines == 16)
        for type in types.prefix(4) { #expect(Self.oracle.preparedDisagreement(line(type, 4), lines: &lines) == nil) }
        #expect(lines.shapedLines == 20)
    }

    @Test("a shape counts its values toward the size limit")
    func declinesOversizedRecordsOfAKnownShape() {
        var limits = RecordValidator.Limits()
        limits.maxRecordBytes = 100
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator(limits: limits))
        let template =
            #"{"recordName":"Car.1","recordType":"Car","fields":{"s":{"type":"STRING","value":"@S"},"#
            + #""r":{"type":"REFERENCE","value":{"recordName":"@R"}}}}"#
        #expect(Self.line(template, ["@S": "short", "@R": "a"]).withUnsafeBytes { lines.prepare($0) } != nil)
        #expect(Self.line(template, ["@S": String(repeating: "x", count: 40), "@R": "a"]).withUnsafeBytes { lines.prepare($0) } != nil)
        #expect(lines.shapedLines == 1)
        // 100 bytes: the field names, the string, and the reference's name, zone and 8 more.
        #expect(Self.line(template, ["@S": String(repeating: "x", count: 200), "@R": "a"]).withUnsafeBytes { lines.prepare($0) } == nil)
        #expect(Self.line(template, ["@S": "short", "@R": String(repeating: "r", count: 80)]).withUnsafeBytes { lines.prepare($0) } == nil)
    }

    @Test("invalid UTF-8 in a value is left to decoding")
    func leavesInvalidUTF8ToDecoding() {
        let (template, modelValues) = Self.models[0]
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        _ = Self.line(template, modelValues).withUnsafeBytes { lines.prepare($0) }
        for bad: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            var values = modelValues
            values["@S"] = "\u{1}"
            var line = Self.line(template, values)
            guard let marker = line.firstIndex(of: 0x01) else { continue }
            line.replaceSubrange(marker...marker, with: bad)
            #expect(Self.oracle.preparedDisagreement(line, lines: &lines) == nil)
            #expect(line.withUnsafeBytes { lines.prepare($0) } == nil)
        }
    }
}
