import FerryCore
import FerryRecords
import Foundation

/// The assets of records mapped from a store, provided to a copy's writer.
///
/// Externally stored files are read where they are; inline blobs are written once by content into one scratch file
/// (``ScratchBlobs``).
public final class StoreAssets: AssetProvider, @unchecked Sendable {
    /// Where an asset's bytes are.
    private enum Source {
        case file(AssetFile)
        case blob(Asset, ScratchBlobs, ScratchBlobs.Slice)

        var asset: Asset {
            switch self {
            case .file(let file): file.asset
            case .blob(let asset, _, _): asset
            }
        }
    }

    private let lock = NSLock()
    private var sources: [SHA256Digest: Source] = [:]
    private let scratch: TemporaryDirectory
    /// The scratch file, created with the first inline blob.
    private var blobs: ScratchBlobs?

    /// Creates an empty set, with inline blobs kept under `temporaryDirectory` (default: the system's).
    public init(temporaryDirectory: String? = nil) throws {
        scratch = try TemporaryDirectory(prefix: "ferry-assets", parent: temporaryDirectory)
    }

    /// The asset of a file (an externally stored value), hashed now.
    public func addFile(_ path: String, fileName: String? = nil) throws -> Asset {
        let file = try AssetFile(hashing: path, fileName: fileName)
        lock.withLock { if sources[file.asset.sha256] == nil { sources[file.asset.sha256] = .file(file) } }
        return file.asset
    }

    /// The asset of bytes held in the store, written to the scratch file the first time they are seen.
    public func addBytes(_ bytes: [UInt8], fileName: String? = nil) throws -> Asset {
        let digest = SHA256Hasher.digest(bytes)
        return try lock.withLock {
            if var known = sources[digest]?.asset {
                known.fileName = fileName
                return known
            }
            let asset = Asset(sha256: digest, size: Int64(bytes.count), fileName: fileName)
            let blobs = try self.blobs ?? ScratchBlobs(path: scratch.file("blobs"))
            self.blobs = blobs
            do {
                sources[digest] = .blob(asset, blobs, try blobs.append(bytes))
            } catch {
                throw CoreError(.writeFailed, "\(blobs.path): could not keep an asset for the copy", cause: error)
            }
            return asset
        }
    }

    public func canProvide(_ asset: Asset) -> Bool { lock.withLock { sources[asset.sha256]?.asset.size == asset.size } }

    public func open(_ asset: Asset) throws -> any AssetReading {
        switch lock.withLock({ sources[asset.sha256] }) {
        case .file(let file)?: return try file.open()
        case .blob(_, let blobs, let slice)?: return ScratchBlobReader(blobs, slice)
        case nil: throw CoreError(.fileNotFound, "asset \(asset.sha256.hex) is not among the store's assets")
        }
    }
}
