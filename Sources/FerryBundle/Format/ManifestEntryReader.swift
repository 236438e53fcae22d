import FerryCore

/// Reads a BagIt checksum manifest entry by entry as its bytes arrive, in pieces of any size.
///
/// A bundle's manifest may list millions of files, so it is never held whole. Each line is `<64 hex>`, spaces or
/// tabs, and the path (percent-decoded, RFC 8493 §2.1.3); lines end at LF, CRLF or CR (a CRLF split between two pieces
/// too), and blank lines are skipped.
struct ManifestEntryReader {
    /// The manifest's name, for errors.
    let file: String
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    /// Whether the last piece ended with a CR (an LF starting the next piece belongs to it).
    private var afterCR = false
    /// Lines read so far, blank ones apart.
    private(set) var lineCount = 0

    /// The longest line accepted: a digest and a path that no file system allows anyway.
    static let maxLineLength = 64 << 10

    init(file: String) { self.file = file }

    /// Reads the entries whose lines end in this piece.
    /// - Throws: ``BundleError`` (`invalidMetadata`) naming the line, or what `body` throws.
    mutating func feed(_ piece: UnsafeRawBufferPointer, _ body: (String, SHA256Digest) throws -> Void) throws {
        var start = 0
        if afterCR, let first = piece.first {
            afterCR = false
            if first == 0x0A { start = 1 }
        }
        while start < piece.count {
            var end = start
            while end < piece.count, piece[end] != 0x0A, piece[end] != 0x0D { end += 1 }
            guard end < piece.count else {
                guard partial.count + (end - start) <= Self.maxLineLength else {
                    throw BundleError(.invalidMetadata, "\(file) line \(lineCount + 1) is longer than \(Self.maxLineLength) bytes")
                }
                partial.append(contentsOf: piece[start..<end])
                return
            }
            if partial.isEmpty {
                try entry(UnsafeRawBufferPointer(rebasing: piece[start..<end]), body)
            } else {
                partial.append(contentsOf: piece[start..<end])
                try partial.withUnsafeBytes { try entry($0, body) }
                partial.removeAll(keepingCapacity: true)
            }
            // A CRLF counts as one line end.
            if piece[end] == 0x0D {
                if end + 1 < piece.count {
                    start = end + (piece[end + 1] == 0x0A ? 2 : 1)
                } else {
                    afterCR = true
                    start = end + 1
                }
            } else {
                start = end + 1
            }
        }
    }

    /// Reads the last line, if it has no line end.
    mutating func finish(_ body: (String, SHA256Digest) throws -> Void) throws {
        guard !partial.isEmpty else { return }
        try partial.withUnsafeBytes { try entry($0, body) }
        partial = []
    }

    private mutating func entry(_ line: UnsafeRawBufferPointer, _ body: (String, SHA256Digest) throws -> Void) throws {
        // A blank line is none.
        if line.isEmpty { return }
        lineCount += 1
        guard line.count > 64, let digest = SHA256Digest(hex: UnsafeRawBufferPointer(rebasing: line[0..<64])),
            line[64] == 0x20 || line[64] == 0x09
        else {
            throw BundleError(.invalidMetadata, "\(file) line \(lineCount): expected \"<sha256>  <path>\"")
        }
        var pathStart = 65
        while pathStart < line.count, line[pathStart] == 0x20 || line[pathStart] == 0x09 { pathStart += 1 }
        let raw = UnsafeRawBufferPointer(rebasing: line[pathStart...])
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw BundleError(.invalidMetadata, "\(file) line \(lineCount): the path is not valid UTF-8")
        }
        let path = raw.contains(UInt8(ascii: "%")) ? BagIt.decodePath(text) : text
        guard !path.isEmpty else { throw BundleError(.invalidMetadata, "\(file) line \(lineCount): no path") }
        try body(path, digest)
    }
}
