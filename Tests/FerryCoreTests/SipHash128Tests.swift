import FerryCore
import Testing

@Suite struct SipHash128Tests {
    /// The reference implementation's key, 00 01 … 0f, as two little-endian words.
    static let referenceKey = (UInt64(0x0706_0504_0302_0100), UInt64(0x0f0e_0d0c_0b0a_0908))

    /// `vectors_sip128` of the reference implementation (SipHash-2-4, 128-bit): the message of length n is 00 01 … n-1.
    static let referenceVectors: [Int: String] = [
        0: "a3817f04ba25a8e66df67214c7550293",
        1: "da87c1d86b99af44347659119b22fc45",
        7: "a1f1ebbed8dbc153c0b84aa61ff08239",
        8: "3b62a9ba6258f5610f83e264f31497b4",
        9: "264499060ad9baabc47f8b02bb6d71ed",
        15: "5493e99933b0a8117e08ec0f97cfc3d9",
        16: "6ee2a4ca67b054bbfd3315bf85230577",
        17: "473d06e8738db89854c066c47ae47740",
        63: "5150d1772f50834a503e069a973fbd7c",
    ]

    static func hex(_ words: (UInt64, UInt64)) -> String {
        withUnsafeBytes(of: (words.0.littleEndian, words.1.littleEndian)) { bytes in
            bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        }
    }

    @Test(arguments: referenceVectors.keys.sorted())
    func matchesTheReferenceVectors(length: Int) {
        let function = SipHash128(key: Self.referenceKey.0, Self.referenceKey.1, compressionRounds: 2, finalizationRounds: 4)
        let message = (0..<length).map { UInt8($0) }
        let digest = message.withUnsafeBytes { function.hash($0) }
        #expect(Self.hex(digest) == Self.referenceVectors[length])
    }

    /// Wycheproof's SipHashX-2-4 test 1: the empty message under another key.
    @Test func matchesWycheproof() {
        let function = SipHash128(key: 0x3099_81bd_c715_4fe3, 0x1ce6_66c1_e066_9dfe, compressionRounds: 2, finalizationRounds: 4)
        let empty: [UInt8] = []
        #expect(Self.hex(empty.withUnsafeBytes { function.hash($0) }) == "b3d2df1f8506643dc8f803a3ceb67f85")
    }

    /// The product's variant (1-3) differs from the reference's on the same input, depends on every byte and on the
    /// length, and two random keys give different functions.
    @Test func roundsLengthAndKeyMatter() {
        let message: [UInt8] = Array("Car.6F9619FF-8B86-D011-B42D-00C04FC964FF".utf8)
        let fast = SipHash128(key: Self.referenceKey.0, Self.referenceKey.1)
        let reference = SipHash128(key: Self.referenceKey.0, Self.referenceKey.1, compressionRounds: 2, finalizationRounds: 4)
        let digest = message.withUnsafeBytes { fast.hash($0) }
        #expect(Self.hex(digest) != Self.hex(message.withUnsafeBytes { reference.hash($0) }))
        for index in message.indices {
            var changed = message
            changed[index] ^= 1
            #expect(Self.hex(changed.withUnsafeBytes { fast.hash($0) }) != Self.hex(digest), "byte \(index)")
        }
        #expect(Self.hex((message + [0]).withUnsafeBytes { fast.hash($0) }) != Self.hex(digest), "a trailing zero counts")
        let first = SipHash128.random()
        let second = SipHash128.random()
        #expect(Self.hex(message.withUnsafeBytes { first.hash($0) }) != Self.hex(message.withUnsafeBytes { second.hash($0) }))
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
