/// Recognizes, by its first bytes, a file given as records that is no text of records at all (compressed, an
/// archive or bundle, a database, a property list, UTF-16, binary), so that `pack` says what it was given and what
/// reads it, instead of rejecting every line of it and writing an empty bundle.
enum RecordFileSignature {
    /// How many bytes ``problem(prefix:path:)`` looks at.
    static let length = 512

    /// What the file is and how to go on, when its first bytes show it is not JSON text; `nil` otherwise.
    static func problem(prefix: [UInt8], path: String) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            prefix.count >= offset + magic.count && prefix[offset..<(offset + magic.count)].elementsEqual(magic)
        }
        func decompress(_ command: String) -> String {
            "if it is a bundle, read it with `ferry ls` and `ferry cat`; otherwise decompress it: \(command) -dc \(path) | ferry pack - …"
        }
        let what: String
        let next: String
        if starts([0x1F, 0x8B]) {
            (what, next) = ("gzip-compressed", decompress("gzip"))
        } else if starts([0x28, 0xB5, 0x2F, 0xFD]) {
            (what, next) = ("Zstandard-compressed", decompress("zstd"))
        } else if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) {
            (what, next) = ("xz-compressed", decompress("xz"))
        } else if starts(Array("BZh".utf8)) {
            (what, next) = ("bzip2-compressed", decompress("bzip2"))
        } else if starts(Array("PK".utf8) + [3, 4]) || starts(Array("ustar".utf8), at: 257) {
            (what, next) = ("a zip or tar archive", "if it is a bundle, read it with `ferry ls` and `ferry cat`")
        } else if starts(Array("SQLite format 3\0".utf8)) {
            (what, next) = ("an SQLite database", "a Core Data store is read by `ferry copy \(path) OUT.tar.gz` (see `ferry inspect`)")
        } else if starts(Array("bplist00".utf8)) {
            (what, next) = ("a binary property list", "a keyed archive is read by `ferry copy` (see `ferry convert`)")
        } else if starts([0xFF, 0xFE]) || starts([0xFE, 0xFF]) {
            (what, next) = ("UTF-16 text", "convert it to UTF-8: iconv -f UTF-16 -t UTF-8 \(path) | ferry pack - …")
        } else if let zero = prefix.firstIndex(of: 0) {
            (what, next) = ("binary data (a NUL byte at offset \(zero))", "give NDJSON or JSON files of CloudKit records")
        } else {
            return nil
        }
        return "\(path) is \(what), not CloudKit records in JSON: \(next)"
    }
}
