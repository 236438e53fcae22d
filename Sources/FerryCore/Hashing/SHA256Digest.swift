/// A SHA-256 digest: 32 bytes, written as 64 lowercase hex digits.
///
/// Ferry addresses assets and checks bundle files by this digest.
public struct SHA256Digest: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The digest, as four big-endian 64-bit words (cheap to hash and compare).
    private let words: (UInt64, UInt64, UInt64, UInt64)

    private init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// The all-zero digest; only a placeholder, never the digest of real data.
    public static let zero = SHA256Digest(words: (0, 0, 0, 0))

    /// Creates a digest from its 32 bytes.
    /// - Parameter bytes: exactly 32 bytes; returns `nil` otherwise.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
        var values: [UInt64] = [0, 0, 0, 0]
        for (index, byte) in bytes.enumerated() {
            values[index / 8] = values[index / 8] << 8 | UInt64(byte)
        }
        words = (values[0], values[1], values[2], values[3])
    }

    /// Parses 64 hex digits (either case).
    /// - Parameter hex: the digest text; returns `nil` unless it is exactly 64 hex digits.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            guard let high = Self.nibble(utf8[2 * index]), let low = Self.nibble(utf8[2 * index + 1]) else { return nil }
            bytes[index] = high << 4 | low
        }
        self.init(bytes: bytes)
    }

    /// The 32 bytes of the digest.
    public var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return result
    }

    /// The digest as 64 lowercase hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
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

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
