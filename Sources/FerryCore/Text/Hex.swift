/// Hexadecimal digits, for the digests and UUIDs Ferry formats and parses in place.
public enum Hex {
    /// `0`–`9`, `a`–`f`, indexed by value.
    public static let lowercaseDigits: StaticString = "0123456789abcdef"
    /// `0`–`9`, `A`–`F`, indexed by value.
    public static let uppercaseDigits: StaticString = "0123456789ABCDEF"

    /// The value of one hex digit, or `nil`; `a`–`f` only when `lowercase` allows them.
    @inline(__always)
    public static func value(_ character: UInt8, lowercase: Bool = true) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f") where lowercase: character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
