/// What a file's first bytes say it is: the signatures Ferry recognizes, in one table, for the readers that sniff a
/// file before they read it (compressed inputs, stores, archives, and files given in the wrong place).
///
/// ```swift
/// switch MagicNumber.recognize(try InputFile(path: path).readPrefix(MagicNumber.prefixLength)) {
/// case .gzip?: …
/// }
/// ```
public enum MagicNumber: CaseIterable, Sendable {
    case gzip, zstd, xz, bzip2, lz4, sevenZip, zip, tar, sqlite, binaryPlist, utf16LittleEndian, utf16BigEndian

    /// The bytes a prefix needs to be recognized whatever it is (a tar's `ustar` is at offset 257).
    public static let prefixLength = 262

    /// The signature's bytes and where they start.
    public var signature: (offset: Int, bytes: [UInt8]) {
        switch self {
        case .gzip: (0, [0x1F, 0x8B])
        case .zstd: (0, [0x28, 0xB5, 0x2F, 0xFD])
        case .xz: (0, [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00])
        case .bzip2: (0, Array("BZh".utf8))
        case .lz4: (0, [0x04, 0x22, 0x4D, 0x18])
        case .sevenZip: (0, [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C])
        case .zip: (0, Array("PK".utf8) + [3, 4])
        case .tar: (257, Array("ustar".utf8))
        case .sqlite: (0, Array("SQLite format 3\0".utf8))
        case .binaryPlist: (0, Array("bplist00".utf8))
        case .utf16LittleEndian: (0, [0xFF, 0xFE])
        case .utf16BigEndian: (0, [0xFE, 0xFF])
        }
    }

    /// Whether `prefix` (a file's first bytes) carries this signature.
    public func matches(_ prefix: some Collection<UInt8>) -> Bool {
        let (offset, bytes) = signature
        return prefix.dropFirst(offset).starts(with: bytes)
    }

    /// The signature `prefix` carries, if any.
    public static func recognize(_ prefix: some Collection<UInt8>) -> MagicNumber? {
        allCases.first { $0.matches(prefix) }
    }
}
