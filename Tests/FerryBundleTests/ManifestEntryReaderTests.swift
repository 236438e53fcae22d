import FerryCore
import Testing

@testable import FerryBundle

@Suite struct ManifestEntryReaderTests {
    /// A manifest read in pieces, split anywhere (inside a CRLF too), gives the entries of the whole.
    @Test func piecesSplitAnywhereReadLikeTheWhole() throws {
        let digest = String(repeating: "ab", count: 32)
        let text = "\(digest)  data/a.ndjson\r\n\r\n\(digest)\tdata/b%25c.ndjson\r\(digest)  data/d\n\(digest)  data/last"
        let bytes = Array(text.utf8)
        var whole: [String] = []
        try BagIt.forEachManifestEntry(bytes, file: "m") { path, _ in whole.append(path) }
        #expect(whole == ["data/a.ndjson", "data/b%c.ndjson", "data/d", "data/last"])
        // Two pieces cut at every place, and one piece per byte.
        let splits = (0...bytes.count).map { [bytes[..<$0], bytes[$0...]] } + [bytes.indices.map { bytes[$0...$0] }]
        for pieces in splits {
            var reader = ManifestEntryReader(file: "m")
            var paths: [String] = []
            for piece in pieces {
                try Array(piece).withUnsafeBytes { try reader.feed($0) { path, _ in paths.append(path) } }
            }
            try reader.finish { path, _ in paths.append(path) }
            #expect(paths == whole, "pieces of \(pieces.map(\.count))")
            #expect(reader.lineCount == 4)
        }
    }

    @Test func refusesLinesLongerThanAnyPath() throws {
        var reader = ManifestEntryReader(file: "m")
        let long = [UInt8](repeating: UInt8(ascii: "a"), count: ManifestEntryReader.maxLineLength + 1)
        #expect(throws: BundleError.self) { try long.withUnsafeBytes { try reader.feed($0) { _, _ in } } }
    }
}
