import FerryCore

/// Recognizes, by its first bytes, a file given as records that is no text of records at all (compressed, an
/// archive or bundle, a database, a property list, UTF-16, binary), so that `pack` says what it was given and what
/// reads it, instead of rejecting every line of it and writing an empty bundle.
enum RecordFileSignature {
    /// How many bytes ``problem(prefix:path:)`` looks at.
    static let length = 512

    /// What the file is and how to go on, when its first bytes show it is not JSON text; `nil` otherwise.
    static func problem(prefix: [UInt8], path: String) -> String? {
        func decompress(_ command: String) -> String {
            "if it is a bundle, read it with `ferry ls` and `ferry cat`; otherwise decompress it: \(command) -dc \(path) | ferry pack - …"
        }
        let what: String
        let next: String
        switch MagicNumber.recognize(prefix) {
        case .gzip?: (what, next) = ("gzip-compressed", decompress("gzip"))
        case .zstd?: (what, next) = ("Zstandard-compressed", decompress("zstd"))
        case .xz?: (what, next) = ("xz-compressed", decompress("xz"))
        case .bzip2?: (what, next) = ("bzip2-compressed", decompress("bzip2"))
        case .zip?, .tar?: (what, next) = ("a zip or tar archive", "if it is a bundle, read it with `ferry ls` and `ferry cat`")
        case .sqlite?:
            (what, next) = ("an SQLite database", "a Core Data store is read by `ferry copy \(path) OUT.tar.gz` (see `ferry inspect`)")
        case .binaryPlist?: (what, next) = ("a binary property list", "a keyed archive is read by `ferry copy` (see `ferry convert`)")
        case .utf16LittleEndian?, .utf16BigEndian?:
            (what, next) = ("UTF-16 text", "convert it to UTF-8: iconv -f UTF-16 -t UTF-8 \(path) | ferry pack - …")
        case .lz4?, .sevenZip?, nil:
            guard let zero = prefix.firstIndex(of: 0) else { return nil }
            (what, next) = ("binary data (a NUL byte at offset \(zero))", "give NDJSON or JSON files of CloudKit records")
        }
        return "\(path) is \(what), not CloudKit records in JSON: \(next)"
    }
}
