/// Makes the bytes a tar (pax) archive puts around a file entry's content, without the content.
///
/// That is the header before it and the zeros that pad it to a 512-byte block after, for entries whose content reaches
/// the archive another way (a bundle's assets written while its records are still being read, ``EarlyAssetWriter``).
///
/// The bytes are libarchive's own, from a writer set up as ``ArchiveWriter``'s, so an entry framed here is the entry
/// that writer would have written.
///
/// ```swift
/// let framing = try TarEntryFraming(mtime: 1_700_000_000)
/// let (header, padding) = try framing.frame("bundle/data/assets/sha256/ab/ab…", size: 5)
/// // header + the 5 bytes + padding is the entry, ready to follow another in a tar stream
/// ```
final class TarEntryFraming {
    /// What the writer emits; emptied for each entry.
    private final class Captured {
        var bytes: [UInt8] = []
    }

    private let captured = Captured()
    private let writer: ArchiveWriter

    /// Frames entries with every entry's modification time set to `mtime` (seconds since 1970).
    init(mtime: Int64) throws {
        let captured = self.captured
        writer = try ArchiveWriter(tarInto: { captured.bytes.append(contentsOf: $0) }, mtime: mtime)
    }

    /// The header and padding of a regular file of `size` bytes at `path`.
    /// - Throws: ``BundleError`` when libarchive refuses the entry.
    func frame(_ path: String, size: Int64) throws -> (header: [UInt8], padding: [UInt8]) {
        captured.bytes.removeAll(keepingCapacity: true)
        try writer.beginFile(path, size: size)
        let header = captured.bytes
        captured.bytes.removeAll(keepingCapacity: true)
        try writer.skipContent(size: size)
        try writer.finishEntry()
        return (header, captured.bytes)
    }
}
