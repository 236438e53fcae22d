import FerryCore

/// A file hashed once as an asset, and reopened later with a check that it is still the version that was hashed
/// (size, inode and times unchanged), so a file edited during a run is detected without hashing it twice.
public struct AssetFile: Sendable {
    /// The file's path.
    public let path: String
    /// Its digest, size and name.
    public let asset: Asset
    let signature: FileSignature

    /// Hashes a file.
    /// - Throws: ``RecordError`` (`asset-unavailable`) when it cannot be read or changes while it is read.
    public init(hashing path: String, fileName: String? = nil) throws {
        let file = try InputFile(path: path)
        guard let before = FileSignature(descriptorOf: file), before.isRegularFile else {
            throw RecordError(.assetUnavailable, at: "", "\(path) is not a regular file")
        }
        var hasher = SHA256Hasher()
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try file.read(into: buffer)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            size += Int64(count)
        }
        guard size == before.size else {
            throw RecordError(.assetUnavailable, at: "", "\(path) changed while it was being read")
        }
        self.path = path
        asset = Asset(sha256: hasher.finalize(), size: size, fileName: fileName)
        signature = before
    }

    /// Opens the file for copying; reading fails if it is no longer the version that was hashed.
    public func open() throws -> any AssetReading {
        try FileAssetReader(path: path, expected: signature, verified: true)
    }
}
