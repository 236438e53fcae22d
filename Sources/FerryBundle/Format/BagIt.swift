import FerryCore
import Foundation

/// The BagIt tag files (RFC 8493): the declaration, `bag-info.txt` and the checksum manifests.
enum BagIt {
    /// The contents of `bagit.txt`.
    static let declaration = Array("BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n".utf8)

    /// Parses `bagit.txt`, checking the version and encoding.
    static func checkDeclaration(_ bytes: [UInt8]) throws {
        let fields = try parseTags(bytes, file: BundleLayout.bagitFile)
        guard let version = fields.first(where: { $0.0 == "BagIt-Version" })?.1 else {
            throw BundleError(.notABundle, "bagit.txt has no BagIt-Version; this is not a BagIt bag")
        }
        guard version == "1.0" || version == "0.97" else {
            throw BundleError(.unsupportedVersion, "bagit.txt declares BagIt-Version \(version); Ferry reads 1.0 and 0.97")
        }
        if let encoding = fields.first(where: { $0.0 == "Tag-File-Character-Encoding" })?.1,
            encoding.uppercased() != "UTF-8"
        {
            throw BundleError(.invalidMetadata, "bagit.txt declares \(encoding) tag files; Ferry reads UTF-8 only")
        }
    }

    /// Parses `label: value` lines (with indented continuation lines) of a tag file.
    static func parseTags(_ bytes: [UInt8], file: String) throws -> [(String, String)] {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw BundleError(.invalidMetadata, "\(file) is not valid UTF-8")
        }
        var fields: [(String, String)] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.isEmpty { continue }
            if line.first == " " || line.first == "\t" {
                guard !fields.isEmpty else { throw BundleError(.invalidMetadata, "\(file) line \(index + 1): continuation without a tag") }
                fields[fields.count - 1].1 += " " + line.trimmed(" \t")
                continue
            }
            guard let colon = line.firstIndex(of: ":") else {
                throw BundleError(.invalidMetadata, "\(file) line \(index + 1): expected \"Label: value\"")
            }
            let label = String(line[..<colon]).trimmed(" \t")
            let value = String(line[line.index(after: colon)...]).trimmed(" \t")
            fields.append((label, value))
        }
        return fields
    }

    /// Formats a checksum manifest: one `<hex>  <path>` line per file, sorted by path.
    static func manifest(_ entries: [(path: String, digest: SHA256Digest)]) -> [UInt8] {
        var bytes: [UInt8] = []
        for entry in sorted(entries) { appendLine(to: &bytes, path: entry.path, digest: entry.digest) }
        return bytes
    }

    /// Entries in a manifest's order: by the UTF-8 bytes of their paths.
    static func sorted(_ entries: [(path: String, digest: SHA256Digest)]) -> [(path: String, digest: SHA256Digest)] {
        entries.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    /// Appends one manifest line, for manifests written entry by entry in path order.
    static func appendLine(to bytes: inout [UInt8], path: String, digest: SHA256Digest) {
        bytes.append(contentsOf: digest.hex.utf8)
        bytes.append(contentsOf: "  ".utf8)
        // Most paths need no encoding, and looking is much cheaper than replacing.
        let plain = !path.utf8.contains { $0 == UInt8(ascii: "%") || $0 == 0x0A || $0 == 0x0D }
        bytes.append(contentsOf: (plain ? path : encodePath(path)).utf8)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Parses a checksum manifest into path → digest.
    static func parseManifest(_ bytes: [UInt8], file: String) throws -> [String: SHA256Digest] {
        var result: [String: SHA256Digest] = [:]
        try forEachManifestEntry(bytes, file: file) { path, digest in
            guard result.updateValue(digest, forKey: path) == nil else {
                throw BundleError(.invalidMetadata, "\(file) lists \(path) twice")
            }
        }
        return result
    }

    /// Reads a checksum manifest line by line, straight from its bytes (see ``ManifestEntryReader``).
    /// - Throws: ``BundleError`` (`invalidMetadata`) naming the line, or what `body` throws.
    static func forEachManifestEntry(_ bytes: [UInt8], file: String, _ body: (String, SHA256Digest) throws -> Void) throws {
        var reader = ManifestEntryReader(file: file)
        try bytes.withUnsafeBytes { try reader.feed($0, body) }
        try reader.finish(body)
    }

    /// RFC 8493 §2.1.3: CR, LF and % in manifest paths are percent-encoded.
    static func encodePath(_ path: String) -> String {
        path.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\n", with: "%0A")
            .replacingOccurrences(of: "\r", with: "%0D")
    }

    static func decodePath(_ path: String) -> String {
        path.replacingOccurrences(of: "%0A", with: "\n").replacingOccurrences(of: "%0a", with: "\n")
            .replacingOccurrences(of: "%0D", with: "\r").replacingOccurrences(of: "%0d", with: "\r")
            .replacingOccurrences(of: "%25", with: "%")
    }
}

extension StringProtocol {
    func trimmed(_ set: String) -> String {
        let characters = Set(set)
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, characters.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
