import FerryCore
import FerryTesting
import FerryTextInput
import Foundation
import Testing

extension LineReader.Line {
    /// `line@offset:text`, or `line@offset:TOO LONG length`: what the reader tests compare.
    var described: String {
        switch self {
        case .bytes(let bytes, let position): "\(position.line)@\(position.offset):\(String(decoding: bytes, as: UTF8.self))"
        case .tooLong(let position, let length): "\(position.line)@\(position.offset):TOO LONG \(length)"
        }
    }
}

@Suite struct LineReaderTests {
    private func lines(_ text: String, maxLineLength: Int = 1 << 20, skippingByteOrderMark: Bool = false) throws -> [String] {
        let scratch = try Scratch()
        let path = try scratch.write("input.ndjson", text)
        var result: [String] = []
        let reader = try LineReader(path: path, maxLineLength: maxLineLength, skippingByteOrderMark: skippingByteOrderMark)
        try reader.forEachLine { result.append($0.described) }
        return result
    }

    @Test func splitsLinesWithPositions() throws {
        #expect(try lines("a\nbb\r\n\nccc") == ["1@0:a", "2@2:bb", "3@6:", "4@7:ccc"])
        #expect(try lines("") == [])
        #expect(try lines("x\n") == ["1@0:x"])
    }

    @Test func skipsAByteOrderMarkAtTheStartOnlyWhenAsked() throws {
        #expect(try lines("\u{FEFF}a\nb", skippingByteOrderMark: true) == ["1@3:a", "2@5:b"])
        #expect(try lines("\u{FEFF}", skippingByteOrderMark: true) == [])
        #expect(try lines("a\n\u{FEFF}b", skippingByteOrderMark: true) == ["1@0:a", "2@2:\u{FEFF}b"])
        #expect(try lines("\u{FEFF}a", skippingByteOrderMark: false) == ["1@0:\u{FEFF}a"])
        #expect(try lines("ab", skippingByteOrderMark: true) == ["1@0:ab"])
    }

    @Test func skipsOverLongLinesAndCarriesOn() throws {
        let long = String(repeating: "x", count: 100)
        #expect(try lines("a\n\(long)\nb\n", maxLineLength: 10) == ["1@0:a", "2@2:TOO LONG 100", "3@103:b"])
    }

    @Test func readsLinesLongerThanItsBuffer() throws {
        let long = String(repeating: "y", count: 3 << 20)
        let result = try lines("\(long)\nz", maxLineLength: 8 << 20)
        #expect(result.count == 2)
        #expect(result[0].count == (3 << 20) + 4)
        #expect(result[1] == "2@\((3 << 20) + 1):z")
    }

    @Test func namesTheFileWhenItIsMissing() {
        #expect {
            _ = try LineReader(path: "/nonexistent/records.ndjson")
        } throws: { error in
            (error as? CoreError)?.code == .fileNotFound && "\(error)".contains("/nonexistent/records.ndjson")
        }
    }
}
