import FerryCore
import Foundation
import Testing

@testable import FerryJSON

/// An object whose array member is streamed parses the same whether its bytes are whole or read in pieces of any size.
@Suite struct JSONStreamingParseTests {
    static let document = Array(
        #"""
        {"a": 12345, "files": [1, 23456, "x\"y", {"k": [true, false, null]}, -0.5e3, []], "z": {"deep": ["\u00e9"]}, "n": 98765}
        """#.utf8)

    typealias Outcome = Result<(JSONObject?, [JSONValue]), JSONSyntaxError>

    /// What a parse gives: the other members and the elements, or the syntax error.
    private func outcome(_ parse: (_ element: (JSONValue, Int) throws -> Void) throws -> JSONObject?) -> Outcome {
        var elements: [JSONValue] = []
        do {
            let object = try parse { value, index in
                #expect(index == elements.count)
                elements.append(value)
            }
            return .success((object, elements))
        } catch let error as JSONSyntaxError {
            return .failure(error)
        } catch {
            Issue.record("unexpected \(error)")
            return .failure(JSONSyntaxError(offset: -1, reason: ""))
        }
    }

    /// Parsing whole bytes.
    private func whole(_ bytes: [UInt8]) -> Outcome {
        outcome { try JSONParser.parseObject(bytes, streaming: "files", element: $0) }
    }

    /// Parsing bytes read `size` at a time, in a window of at most `limit`.
    private func pieces(_ bytes: [UInt8], size: Int, limit: Int = 1 << 20) -> Outcome {
        var offset = 0
        return outcome { element in
            try JSONParser.parseObject(
                reading: { buffer in
                    let count = min(size, buffer.count, bytes.count - offset)
                    bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
                    offset += count
                    return count
                }, streaming: "files", maxValueBytes: limit, element: element)
        }
    }

    private func same(_ a: Outcome, _ b: Outcome) -> Bool {
        switch (a, b) {
        case (.success(let x), .success(let y)): x.0 == y.0 && x.1 == y.1
        case (.failure(let x), .failure(let y)): x.offset == y.offset
        default: false
        }
    }

    @Test(arguments: [1, 2, 3, 5, 16, 1000])
    func piecesOfAnySizeParseAsTheWhole(size: Int) {
        let expected = whole(Self.document)
        guard case .success(let parsed) = expected else { return #expect(Bool(false), "the document parses") }
        #expect(parsed.1.count == 6)
        #expect(same(pieces(Self.document, size: size, limit: 40), expected), "a window of 40 bytes at most")
    }

    @Test(arguments: [1, 7])
    func aCutOrDamagedDocumentFailsAtTheSameOffset(size: Int) {
        for cut in stride(from: 0, to: Self.document.count, by: 3) {
            let truncated = Array(Self.document[..<cut])
            #expect(same(pieces(truncated, size: size), whole(truncated)), "cut at \(cut)")
            var damaged = Self.document
            damaged[cut] = UInt8(ascii: "}")
            #expect(same(pieces(damaged, size: size), whole(damaged)), "damaged at \(cut)")
        }
        let repeated = Array(#"{"files": [], "files": []}"#.utf8)
        #expect(throws: JSONSyntaxError.self) { try pieces(repeated, size: 4).get() }
    }

    @Test func aValueLargerThanTheLimitIsRefused() {
        let long = Array(#"{"files": ["\#(String(repeating: "x", count: 100))"]}"#.utf8)
        #expect(throws: JSONSyntaxError.self) { try pieces(long, size: 8, limit: 64).get() }
        #expect(throws: Never.self) { try pieces(long, size: 8, limit: 128).get() }
    }
}
