/// SipHash with a 128-bit output (Aumasson and Bernstein), keyed, over one contiguous buffer.
///
/// Swift's `Hasher` is SipHash-1-3 with a 64-bit output and a per-process key; a 128-bit key for millions of record
/// identities took two of them, each buffering its input a byte at a time through its tail. This one computes the
/// 128-bit variant in one pass over 8-byte words: half the rounds, no buffering. swift-crypto has no SipHash, so it
/// is written here (the reference's vectors for SipHash-2-4-128 check it, see the tests).
package struct SipHash128: Sendable {
    @usableFromInline let k0: UInt64
    @usableFromInline let k1: UInt64
    /// Rounds per 8-byte word and at the end: 1 and 3 as Swift's `Hasher` (SipHash-1-3), 2 and 4 for the reference.
    @usableFromInline let compressionRounds: Int
    @usableFromInline let finalizationRounds: Int

    /// A hash function keyed by two 64-bit words (the reference's key bytes 0-7 and 8-15, little-endian).
    package init(key k0: UInt64, _ k1: UInt64, compressionRounds: Int = 1, finalizationRounds: Int = 3) {
        self.k0 = k0
        self.k1 = k1
        self.compressionRounds = compressionRounds
        self.finalizationRounds = finalizationRounds
    }

    /// A SipHash-1-3 keyed with fresh random bits: its values mean something only within this process, and nobody
    /// who chose the input bytes can choose collisions.
    package static func random() -> SipHash128 {
        var generator = SystemRandomNumberGenerator()
        return SipHash128(key: generator.next(), generator.next())
    }

    /// The 128-bit hash of `bytes`, as the reference's two little-endian output words.
    @inlinable @inline(__always)
    package func hash(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var state = State(k0: k0, k1: k1)
        let count = bytes.count
        let whole = count & ~7
        var offset = 0
        while offset < whole {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            state.absorb(word, rounds: compressionRounds)
            offset += 8
        }
        var last = UInt64(truncatingIfNeeded: count) << 56
        var shift: UInt64 = 0
        while offset < count {
            last |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        state.absorb(last, rounds: compressionRounds)
        return state.finish(rounds: finalizationRounds)
    }

    /// The four words of SipHash's state.
    @usableFromInline
    struct State {
        @usableFromInline var v0: UInt64
        @usableFromInline var v1: UInt64
        @usableFromInline var v2: UInt64
        @usableFromInline var v3: UInt64

        /// The state for a 128-bit output (`v1` marked with 0xee).
        @inlinable @inline(__always)
        init(k0: UInt64, k1: UInt64) {
            v0 = 0x736f_6d65_7073_6575 ^ k0
            v1 = 0x646f_7261_6e64_6f6d ^ k1 ^ 0xee
            v2 = 0x6c79_6765_6e65_7261 ^ k0
            v3 = 0x7465_6462_7974_6573 ^ k1
        }

        @inlinable @inline(__always)
        mutating func absorb(_ word: UInt64, rounds: Int) {
            v3 ^= word
            for _ in 0..<rounds { round() }
            v0 ^= word
        }

        @inlinable @inline(__always)
        mutating func finish(rounds: Int) -> (UInt64, UInt64) {
            v2 ^= 0xee
            for _ in 0..<rounds { round() }
            let first = v0 ^ v1 ^ v2 ^ v3
            v1 ^= 0xdd
            for _ in 0..<rounds { round() }
            return (first, v0 ^ v1 ^ v2 ^ v3)
        }

        @inlinable @inline(__always)
        static func rotate(_ word: UInt64, _ count: UInt64) -> UInt64 { word << count | word >> (64 - count) }

        @inlinable @inline(__always)
        mutating func round() {
            v0 &+= v1
            v1 = Self.rotate(v1, 13)
            v1 ^= v0
            v0 = Self.rotate(v0, 32)
            v2 &+= v3
            v3 = Self.rotate(v3, 16)
            v3 ^= v2
            v0 &+= v3
            v3 = Self.rotate(v3, 21)
            v3 ^= v0
            v2 &+= v1
            v1 = Self.rotate(v1, 17)
            v1 ^= v2
            v2 = Self.rotate(v2, 32)
        }
    }
}
