import FerryCore
import FerryJSON
import FerryTesting
import FerryTextInput
import Foundation
import Testing

/// `LineReader.nextRecordText()`: NDJSON a line at a time, JSON documents a record at a time, with the line and byte
/// where each record starts.
@Suite struct RecordTextTests {
    private func records(_ text: String, maxLength: Int = 1 << 20) throws -> [String] {
        let scratch = try Scratch()
        let path = try scratch.write("input.json", text)
        let reader = try LineReader(path: path, maxLineLength: maxLength, skippingByteOrderMark: true)
        var result: [String] = []
        while let item = try reader.nextRecordText() { result.append(item.described) }
        return result
    }

    private func syntaxError(_ text: String) throws -> String? {
        do {
            _ = try records(text)
            return nil
        } catch let error as CoreError where error.code == .jsonSyntax {
            return error.message
        }
    }

    @Test func readsNDJSONALineAtATime() throws {
        #expect(try records("{\"a\":1}\n{\"b\":[2]}\n") == ["1@0:{\"a\":1}", "2@8:{\"b\":[2]}"])
        // A bad line is the decoder's to refuse; the lines after it are still read.
        #expect(try records("{\"a\":1}\n{\"b\":\n{\"c\":3}") == ["1@0:{\"a\":1}", "2@8:{\"b\":", "3@14:{\"c\":3}"])
        #expect(try records("\n\n{\"a\":1}") == ["1@0:", "2@1:", "3@2:{\"a\":1}"])
        #expect(try records("") == [])
        #expect(try records("not json\n") == ["1@0:not json"])
    }

    @Test func readsPrettyPrintedRecordsOneAfterAnother() throws {
        let text = "{\n  \"a\": \"}{\\\"\",\n  \"b\": [1, {\"c\": 2}]\n}\n\n{ \"d\": 4 }\n"
        #expect(try records(text) == ["1@0:{\n  \"a\": \"}{\\\"\",\n  \"b\": [1, {\"c\": 2}]\n}", "6@41:{ \"d\": 4 }"])
    }

    @Test func readsArraysOfRecords() throws {
        #expect(try records("[\n {\"a\":1},\n {\"b\":2}\n]\n") == ["2@3:{\"a\":1}", "3@13:{\"b\":2}"])
        #expect(try records("[]") == [])
        #expect(try records("[{\"a\":1}] [{\"b\":2}]") == ["1@1:{\"a\":1}", "1@11:{\"b\":2}"])
        // Values that are not objects are cut out as they are, for the decoder to refuse.
        #expect(try records("[1, \"x\", null]") == ["1@1:1", "1@4:\"x\"", "1@9:null"])
    }

    @Test func readsTheRecordsOfACloudKitResponse() throws {
        let text = """
            {
              "syncToken": "a]b}",
              "more": {"records": [{"no": 1}]},
              "records": [
                {"recordName": "A"},
                {"recordName": "B"}
              ],
              "continuationMarker": "x\\"]}"
            }
            {"recordName": "C",
             "fields": {}}
            """
        #expect(
            try records(text) == [
                "5@80:{\"recordName\": \"A\"}", "6@105:{\"recordName\": \"B\"}", "10@164:{\"recordName\": \"C\",\n \"fields\": {}}",
            ])
        // An object whose "records" is not an array is a record like any other.
        #expect(try records("{\"records\": 3,\n\"x\": 1}") == ["1@0:{\"records\": 3,\n\"x\": 1}"])
    }

    @Test func cutsRecordsAcrossRefillsOfASmallBuffer() throws {
        // A 64-byte limit makes every record cross the buffer's end; the one past the limit is skipped.
        let items = (0..<40).map { "{\"name\": \"record \($0)\", \"list\": [\($0), \"]\"]}" }
        let text = "{\"records\": [\n" + items.joined(separator: ",\n") + "\n]}"
        let result = try records(text, maxLength: 64)
        #expect(result.count == 40)
        #expect(result.first == "2@14:\(items[0])")
        #expect(result.last?.hasSuffix(items[39]) == true)
        let long = "{\"a\": \"" + String(repeating: "z", count: 200) + "\"}"
        #expect(try records("[\(long), {\"b\": 1}]", maxLength: 64) == ["1@1:TOO LONG \(long.utf8.count)", "1@\(long.utf8.count + 3):{\"b\": 1}"])
    }

    @Test func namesWhereADocumentIsBrokenBetweenRecords() throws {
        #expect(
            try syntaxError("[{\"a\":1}\n {\"b\":2}]")?.contains("line 2, byte 10: expected \",\" or \"]\" after a record in the array, found \"{\"")
                == true)
        #expect(try syntaxError("[{\"a\":1},\n")?.contains("the file ends inside an array of records") == true)
        #expect(try syntaxError("[{\"a\":1},,{}]")?.contains("expected a record in the array, found \",\"") == true)
        #expect(try syntaxError("{\n\"a\": 1\n}\nx")?.contains("line 4, byte 11: expected a record object") == true)
        #expect(try syntaxError("{\"records\": [{}],\n \"x\": \"")?.contains("ends inside the object holding the records") == true)
        #expect(try syntaxError("[{}] ]")?.contains("give NDJSON") == true)
        // A first line that never closes, and no other line: NDJSON, one bad line for the decoder.
        #expect(try records("{\"records\": [{}], \"x\": \"") == ["1@0:{\"records\": [{}], \"x\": \""])
    }
}
