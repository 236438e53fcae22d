import FerryCore
import FerryRecords
import Foundation

/// The assets of records mapped from a store, provided to a copy's writer.
///
/// Externally stored files are read where they are; inline blobs are written once by content into a scratch folder.
public final class StoreAssets: AssetProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var files: [SHA256Digest: AssetFile] = [:]
    private let scratch: TemporaryDirectory

    /// Creates an empty set, with inline blobs kept under `temporaryDirectory` (default: the system's).
    public init(temporaryDirectory: String? = nil) throws {
        scratch = try TemporaryDirectory(prefix: "ferry-assets", parent: temporaryDirectory)
    }

    /// The asset of a file (an externally stored value), hashed now.
    public func addFile(_ path: String, fileName: String? = nil) throws -> Asset {
        let file = try AssetFile(hashing: path, fileName: fileName)
        lock.withLock { if files[file.asset.sha256] == nil { files[file.asset.sha256] = file } }
        return file.asset
    }

    /// The asset of bytes held in the store, written to the scratch folder the first time they are seen.
    public func addBytes(_ bytes: [UInt8], fileName: String? = nil) throws -> Asset {
        let digest = SHA256Hasher.digest(bytes)
        if let known = lock.withLock({ files[digest] }) {
            var asset = known.asset
            asset.fileName = fileName
            return asset
        }
        let path = scratch.file(digest.hex)
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw CoreError(.writeFailed, "\(path): could not keep an asset for the copy", cause: error)
        }
        let file = try AssetFile(hashing: path, fileName: fileName)
        lock.withLock { if files[digest] == nil { files[digest] = file } }
        return file.asset
    }

    public func canProvide(_ asset: Asset) -> Bool { lock.withLock { files[asset.sha256] != nil } }

    public func open(_ asset: Asset) throws -> any AssetReading {
        guard let file = lock.withLock({ files[asset.sha256] }) else {
            throw CoreError(.fileNotFound, "asset \(asset.sha256.hex) is not among the store's assets")
        }
        return try file.open()
    }
}
