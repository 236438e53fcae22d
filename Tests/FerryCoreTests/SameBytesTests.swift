import FerryCore
import Testing

/// ``Swift/UnsafeRawBufferPointer/hasSameBytes(as:)`` compares short runs a word at a time and long ones with `memcmp`;
/// every way must agree with comparing byte by byte.
@Suite struct SameBytesTests {
    @Test("equal buffers of every length up to 80 bytes, and each one-byte difference in them")
    func agreesWithByteByByte() {
        for length in 0...80 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            bytes.withUnsafeBytes { original in
                var copy = bytes
                copy.withUnsafeBytes { #expect(original.hasSameBytes(as: $0), "length \(length)") }
                for place in 0..<length {
                    copy = bytes
                    copy[place] ^= 0x80
                    copy.withUnsafeBytes { #expect(!original.hasSameBytes(as: $0), "length \(length), byte \(place)") }
                }
            }
        }
    }

    @Test("buffers of different lengths differ, empty ones are equal")
    func lengths() {
        let bytes: [UInt8] = Array(0..<20)
        bytes.withUnsafeBytes { all in
            #expect(!all.hasSameBytes(as: UnsafeRawBufferPointer(rebasing: all[0..<19])))
            #expect(UnsafeRawBufferPointer(rebasing: all[3..<3]).hasSameBytes(as: UnsafeRawBufferPointer(start: nil, count: 0)))
            // Parts at odd offsets (unaligned loads).
            #expect(UnsafeRawBufferPointer(rebasing: all[1..<12]).hasSameBytes(as: UnsafeRawBufferPointer(rebasing: all[1..<12])))
        }
    }
}
