/// A SHA-256 digest: 32 bytes, written as 64 lowercase hex digits.
///
/// Ferry addresses assets and checks bundle files by this digest.
public struct SHA256Digest: Sendable, Hashable, Comparable, CustomStringConvertible, BitwiseCopyable {
    /// The digest, as four big-endian 64-bit words (cheap to hash and compare).
    private let words: (UInt64, UInt64, UInt64, UInt64)

    private init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// The digest's first 8 bytes, as a big-endian number: a short key for sets that may take two digests for one.
    public var prefix64: UInt64 { words.0 }

    /// The all-zero digest; only a placeholder, never the digest of real data.
    public static let zero = SHA256Digest(words: (0, 0, 0, 0))

    /// Creates a digest from its 32 bytes.
    /// - Parameter bytes: exactly 32 bytes; returns `nil` otherwise.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
        if case let digest?? = bytes.withContiguousStorageIfAvailable({ Self(bytes: UnsafeRawBufferPointer($0)) }) {
            self = digest
            return
        }
        var values: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for (index, byte) in bytes.enumerated() {
            switch index / 8 {
            case 0: values.0 = values.0 << 8 | UInt64(byte)
            case 1: values.1 = values.1 << 8 | UInt64(byte)
            case 2: values.2 = values.2 << 8 | UInt64(byte)
            default: values.3 = values.3 << 8 | UInt64(byte)
            }
        }
        words = values
    }

    /// Creates a digest from its 32 bytes in memory.
    /// - Parameter bytes: exactly 32 bytes; returns `nil` otherwise.
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        func word(_ index: Int) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
        words = (word(0), word(1), word(2), word(3))
    }

    /// Parses 64 hex digits (either case).
    /// - Parameter hex: the digest text; returns `nil` unless it is exactly 64 hex digits.
    public init?(hex: String) {
        var hex = hex
        guard let digest = hex.withUTF8({ Self(hex: UnsafeRawBufferPointer($0)) }) else { return nil }
        self = digest
    }

    /// Parses 64 hex digits (either case) from bytes, such as a JSON string in place.
    /// - Parameter hex: the digest text; returns `nil` unless it is exactly 64 hex digits.
    package init?(hex: UnsafeRawBufferPointer) {
        guard hex.count == 64 else { return nil }
        var values: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for word in 0..<4 {
            var value: UInt64 = 0
            for position in (word * 16)..<(word * 16 + 16) {
                guard let nibble = Hex.value(hex[position]) else { return nil }
                value = value << 4 | UInt64(nibble)
            }
            switch word {
            case 0: values.0 = value
            case 1: values.1 = value
            case 2: values.2 = value
            default: values.3 = value
            }
        }
        words = values
    }

    /// One of the four words, by position.
    @inline(__always)
    private func word(_ index: Int) -> UInt64 {
        switch index {
        case 0: words.0
        case 1: words.1
        case 2: words.2
        default: words.3
        }
    }

    /// Calls `body` with the 32 bytes (big-endian), laid out on the stack: no array is made.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var bigEndian = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return try Swift.withUnsafeBytes(of: &bigEndian, body)
    }

    /// The 32 bytes of the digest.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The digest as 64 lowercase hex digits.
    public var hex: String {
        String(unsafeUninitializedCapacity: 64) { buffer in
            writeHex(into: UnsafeMutableRawBufferPointer(buffer))
            return 64
        }
    }

    /// Writes the 64 hex digits into exactly 64 bytes.
    package func writeHex(into buffer: UnsafeMutableRawBufferPointer) {
        let digits = Hex.lowercaseDigits
        var position = 0
        for index in 0..<4 {
            let word = self.word(index)
            for shift in stride(from: 60, through: 0, by: -4) {
                buffer[position] = digits.utf8Start[Int(word >> UInt64(shift) & 0x0F)]
                position += 1
            }
        }
    }

    public var description: String { hex }

    public static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words == rhs.words
    }

    public static func < (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        (lhs.words.0, lhs.words.1, lhs.words.2, lhs.words.3) < (rhs.words.0, rhs.words.1, rhs.words.2, rhs.words.3)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
