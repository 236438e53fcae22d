import FerryCore
import Foundation
import Testing

@Suite struct StringUTF8BytesTests {
    @Test(arguments: [
        "", "Car", "exactly15bytes!", "sixteen bytes ok", "Note.E591A4E9-1659-4C4C-B059-B18DA08F73C7", "Zürich → 東京 🚗",
        String(repeating: "x", count: 4096),
    ])
    func givesTheStringsUTF8(text: String) {
        #expect(text.withUTF8Bytes { Array($0) } == Array(text.utf8))
        // Strings made other ways: from a substring, from Foundation, by appending.
        let sliced = String(("<" + text + ">").dropFirst().dropLast())
        #expect(sliced.withUTF8Bytes { Array($0) } == Array(text.utf8))
        let bridged = NSString(string: text) as String
        #expect(bridged.withUTF8Bytes { Array($0) } == Array(text.utf8))
    }
}
