import FerryCore

/// A file attached to a record, addressed by its content: the same bytes are stored once however many records use
/// them.
public struct Asset: Sendable, Hashable {
    /// The SHA-256 of the file's bytes.
    public var sha256: SHA256Digest
    /// The file's size in bytes.
    public var size: Int64
    /// The file's original name, if known (for people; not part of its identity).
    public var fileName: String?

    /// Creates an asset reference.
    public init(sha256: SHA256Digest, size: Int64, fileName: String? = nil) {
        self.sha256 = sha256
        self.size = size
        self.fileName = fileName
    }
}
