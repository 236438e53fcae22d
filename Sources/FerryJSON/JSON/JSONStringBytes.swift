import FerryCore

/// Eight-bytes-at-a-time stepping over the inside of a JSON string: the loops that find a string's end.
///
/// Most bytes of a string need no attention; these tests find the first 8-byte word that may hold one that does (a
/// quote, a backslash or a control byte, and optionally a non-ASCII byte), so the byte-by-byte loops that follow only
/// see that word. The word tests are the exact "has a zero byte" and "has a byte less than n" tests of Hacker's
/// Delight §6-1 (no false negatives, no false positives): written by hand, as no library scans byte buffers this
/// way on Linux, and the standard library's string search works on `String`, not on raw bytes.
package enum JSONStringBytes {
    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101
    @usableFromInline static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether a little-endian word of eight string bytes holds `"`, `\` or a byte below 0x20.
    @inlinable
    package static func needsEscape(_ word: UInt64) -> Bool { escapeMask(word) != 0 }

    /// The high bit of each byte of a little-endian word that may be `"`, `\` or below 0x20: the lowest bit set marks
    /// the first such byte exactly (a borrow only runs up from a byte that matches); those above it may be false.
    @inlinable
    package static func escapeMask(_ word: UInt64) -> UInt64 {
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let found = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
        return found & highBits
    }

    /// Whether a word holds a byte of 0x80 or above.
    @inlinable
    package static func hasNonASCII(_ word: UInt64) -> Bool { word & highBits != 0 }

    /// Steps from `offset` over whole words that need no escape, stopping at the first word that may (or where fewer
    /// than eight bytes are left); the offset reached, and whether any byte passed over is non-ASCII.
    /// - Parameter asciiOnly: stop at a word with a non-ASCII byte too.
    @inlinable
    package static func skipPlainWords(_ bytes: UnsafeRawBufferPointer, from offset: Int, asciiOnly: Bool) -> (offset: Int, nonASCII: Bool) {
        guard let base = bytes.baseAddress else { return (offset, false) }
        var position = offset
        var high: UInt64 = 0
        while bytes.count - position >= 8 {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            if needsEscape(word) || (asciiOnly && hasNonASCII(word)) { break }
            high |= word
            position += 8
        }
        return (position, hasNonASCII(high))
    }

    /// Where the string whose content starts at `start` ends (the offset of its closing quote), when the content is its
    /// own canonical form: no `"`, `\` or control byte (which the canonical form escapes), and well-formed UTF-8 (which
    /// the decoder would otherwise replace); `nil` for any other content, or no closing quote.
    ///
    /// One pass, a word at a time: a word of plain ASCII is stepped over whole, and in any other the first byte that
    /// needs attention (a quote, a backslash, a control byte, the lead byte of a multi-byte character) is found from
    /// the word's masks and jumped to, the character there checked where it is. (Finding the end first and checking
    /// the whole content as UTF-8 afterwards read text with a non-ASCII character every few words twice, and reading
    /// every word with a non-ASCII byte a byte at a time was a quarter of preparing such lines.)
    @inlinable
    package static func plainContentEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = start
        while true {
            if bytes.count - offset >= 8 {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                let attention = escapeMask(word) | (word & highBits)
                if attention == 0 {
                    offset += 8
                    continue
                }
                offset += attention.trailingZeroBitCount >> 3
            } else if offset >= bytes.count {
                return nil
            }
            let byte = bytes[offset]
            if byte < 0x80 {
                if byte == UInt8(ascii: "\"") { return offset }
                guard byte >= 0x20, byte != UInt8(ascii: "\\") else { return nil }
                offset += 1
            } else {
                // A continuation byte is never a quote: a character cut short by the end is not well formed.
                guard let length = UTF8Validation.wellFormedLength(bytes, at: offset) else { return nil }
                offset += length
            }
        }
    }
}
