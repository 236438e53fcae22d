/// The container a bundle is packed in.
public enum ArchiveFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A pax tar archive compressed with gzip (the default): `.tar.gz`, `.tgz`.
    case tarGzip = "tar.gz"
    /// A pax tar archive compressed with Zstandard: `.tar.zst`, `.tzst`.
    case tarZstd = "tar.zst"
    /// A zip archive with deflate: `.zip`.
    case zip = "zip"

    public var description: String { rawValue }

    /// The format a file name's extension names, if any.
    public init?(fileName: String) {
        let lower = fileName.lowercased()
        if lower.hasSuffix(".tar.gz") || lower.hasSuffix(".tgz") {
            self = .tarGzip
        } else if lower.hasSuffix(".tar.zst") || lower.hasSuffix(".tzst") || lower.hasSuffix(".tar.zstd") {
            self = .tarZstd
        } else if lower.hasSuffix(".zip") {
            self = .zip
        } else {
            return nil
        }
    }

    /// A file name without the extension this format recognises (the bag's base directory name, RFC 8493 §4.2).
    public static func baseName(of fileName: String) -> String {
        let lower = fileName.lowercased()
        for suffix in [".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.zstd", ".zip"] where lower.hasSuffix(suffix) {
            return String(fileName.dropLast(suffix.count))
        }
        return fileName
    }
}
