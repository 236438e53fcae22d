import FerryCore
import FerryJSON
import Testing

@Suite struct SHA256Tests {
    @Test func matchesKnownVectors() {
        #expect(SHA256Hasher.digest(Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Hasher.digest([UInt8]()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func givesItsBytesInPlaceAsInAnArray() {
        for text in ["abc", "", "Ferry"] {
            let digest = SHA256Hasher.digest(Array(text.utf8))
            #expect(digest.withUnsafeBytes { Array($0) } == digest.bytes)
            #expect(SHA256Digest(bytes: digest.withUnsafeBytes { Array($0) }) == digest)
        }
    }

    @Test func hashesIncrementally() {
        var hasher = SHA256Hasher()
        hasher.update(Array("ab".utf8))
        hasher.update(Array("c".utf8))
        #expect(hasher.finalize() == SHA256Hasher.digest(Array("abc".utf8)))
    }

    @Test func parsesHexInEitherCaseAndRefusesJunk() throws {
        let hex = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
        let digest = try #require(SHA256Digest(hex: hex))
        #expect(digest.hex == hex.lowercased())
        #expect(SHA256Digest(bytes: digest.bytes) == digest)
        #expect(SHA256Digest(hex: String(hex.dropLast())) == nil)
        #expect(SHA256Digest(hex: String(hex.dropLast()) + "g") == nil)
        #expect(SHA256Digest.zero < digest)
    }

    @Test func parsesRawBytesAndWritesHexIntoJSON() throws {
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let digest = try #require(Array(hex.uppercased().utf8).withUnsafeBytes { SHA256Digest(hex: $0) })
        #expect(digest == SHA256Digest(hex: hex))
        #expect(Array(hex.dropLast().utf8).withUnsafeBytes { SHA256Digest(hex: $0) } == nil)
        var writer = JSONWriter()
        writer.byte(UInt8(ascii: "["))
        digest.writeHex(to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[" + hex)
    }
}
