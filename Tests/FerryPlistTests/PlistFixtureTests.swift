import FerryCore
import FerryJSON
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// Every property list and archive in `../shared/fixtures` reads, and agrees with Python's plistlib.
@Suite struct PlistFixtureTests {
    /// A value in the form plistlib_dump.py writes.
    static func comparable(_ value: PlistValue) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .unsigned(let number): .unsigned(number)
        case .real(let number): ["$real": .number(number)]
        case .date(let seconds): ["$date": .number(seconds)]
        case .data(let bytes): ["$data": .string(Data(bytes).base64EncodedString())]
        case .string(let text): .string(text)
        case .uid(let uid): ["$uid": .integer(Int64(uid))]
        case .array(let elements), .set(let elements), .orderedSet(let elements): .array(elements.map(comparable))
        case .dictionary(let entries): .object(JSONObject(entries.map { .init(key: $0.key, value: comparable($0.value)) }))
        }
    }

    /// Normalises numbers so an integral real and an integer compare by value (JSON has one number type).
    static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            if object.count == 1, let real = object["$real"]?.doubleValue { return ["$real": .number(real)] }
            if object.count == 1, let date = object["$date"]?.doubleValue { return ["$date": .number(date)] }
            return .object(JSONObject(object.members.map { .init(key: $0.key, value: normalized($0.value)) }))
        case .array(let elements): return .array(elements.map(normalized))
        default: return value
        }
    }

    @Test func agreesWithPlistlibOnEveryFixture() throws {
        let files = PlistFixtures.all
        guard !files.isEmpty else { return }
        #expect(files.count >= 60, "expected the 46 corelibs archives and the other fixtures, found \(files.count)")
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/plistlib_dump.py").path
        let result = try ProcessResult.run("/usr/bin/env", ["python3", helper] + files)
        #expect(result.status == 0, "\(result.errors)")
        var compared = 0
        for line in result.output.split(separator: "\n") {
            let report = try #require(try JSONParser.parse(String(line)).objectValue)
            let file = try #require(report["file"]?.stringValue)
            let ours = Result { try PlistDocument(bytes: Array(Data(contentsOf: URL(fileURLWithPath: file)))).value() }
            if let expected = report["value"] {
                let value = try ours.get()
                #expect(Self.normalized(Self.comparable(value)) == Self.normalized(expected), "\(file) differs from plistlib")
                compared += 1
            } else {
                // plistlib refuses it (a cyclic or invalid trailer): Ferry must refuse it too, with an error.
                #expect(throws: PlistError.self, "\(file): plistlib says \(report["error"] ?? .null)") { try ours.get() }
            }
        }
        #expect(compared >= 58)
    }

    @Test func everyFixtureDecodesOrIsRefusedWithAReason() throws {
        for file in PlistFixtures.all {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            do {
                let document = try PlistDocument(bytes: bytes)
                let inspection = try PlistInspection(document)
                if let top = try document.decodeArchive() {
                    #expect(!top.isEmpty, "\(file)")
                    #expect(inspection.isKeyedArchive)
                    _ = top.map(\.value.jsonValue)
                } else {
                    _ = try document.value().jsonValue
                }
            } catch {
                #expect(file.hasSuffix("binary_circular_array.plist") || file.hasSuffix("binary_zero_offset_size.plist"), "\(file): \(error)")
                #expect(error.code == .malformed)
            }
        }
    }

    @Test func refusesTheHostileRustPlistFixtures() throws {
        guard let circular = try PlistFixtures.bytes("rust-plist/binary_circular_array.plist"),
            let zeroOffset = try PlistFixtures.bytes("rust-plist/binary_zero_offset_size.plist")
        else { return }
        #expect { try PlistDocument(bytes: zeroOffset) } throws: { ($0 as? PlistError)?.reason.contains("offset size 0") == true }
        // Its offset table overlaps the trailer, which Apple's reader refuses too (CFBinaryPList.c).
        #expect { try PlistDocument(bytes: circular) } throws: { ($0 as? PlistError)?.code == .malformed }
    }

    @Test func readsThreeByteOffsetsAndUTF16Strings() throws {
        guard let threeByte = try PlistFixtures.bytes("rust-plist/binary_three_byte_integer_offset_table.plist"),
            let utf16 = try PlistFixtures.bytes("rust-plist/utf16_bplist.plist")
        else { return }
        let document = try PlistDocument(bytes: threeByte)
        #expect(document.format == .binary)
        #expect(try document.value()["data"] != nil)
        let text = try PlistDocument(bytes: utf16).value()
        #expect(text["name"] == .string("★ or better"))
    }
}
