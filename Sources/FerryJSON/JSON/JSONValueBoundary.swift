import FerryCore

/// Finds where one JSON value ends, a chunk of bytes at a time, without parsing it: it follows only nesting and
/// strings (with their escapes), so that a document can be cut into its values before anything decodes them.
///
/// It does not check the value: brackets that do not match end it early, and whatever is cut out is the decoder's to
/// accept or refuse. A scalar (a number, `true`…) ends before the first whitespace, comma or closing bracket.
///
/// ```swift
/// var boundary = JSONValueBoundary()
/// if let end = boundary.scan(bytes) { value = bytes[..<end] } else { /* read more, then scan the new bytes */ }
/// ```
public struct JSONValueBoundary: Sendable {
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var started = false
    private var scalar = false

    /// A boundary for a value that starts with the next byte scanned (whitespace before it is skipped).
    public init() {}

    /// A boundary for the rest of a value already opened `depth` containers deep: it ends after the byte that closes
    /// the outermost one.
    public init(insideContainers depth: Int) {
        self.depth = depth
        started = true
    }

    /// Whether the value is a scalar, which the end of the input also ends.
    public var isScalar: Bool { scalar }

    /// Scans the next bytes of the input.
    /// - Returns: the index in `bytes` just past the value's last byte, or `nil` when the bytes end first (scan the
    ///   bytes that follow them next).
    package mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        while index < bytes.count {
            if inString, !escaped {
                // A word at a time over the string's plain bytes: strings are most of a record.
                index = JSONStringBytes.skipPlainWords(bytes, from: index, asciiOnly: false).offset
                guard index < bytes.count else { break }
            }
            let byte = bytes[index]
            index += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == Self.backslash {
                    escaped = true
                } else if byte == Self.quote {
                    inString = false
                    if depth == 0 { return index }
                }
                continue
            }
            if scalar {
                if Self.endsScalar(byte) { return index - 1 }
                continue
            }
            switch byte {
            case Self.quote:
                inString = true
                started = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                started = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                started = true
                if depth <= 0 { return index }
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            default:
                if !started {
                    started = true
                    scalar = true
                }
            }
        }
        return nil
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"): true
        default: false
        }
    }
}
