import FerryCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Assets as files under one directory: named by records as `{"path": "photos/1.jpg"}` relative to the directory,
/// or found by content at `sha256/<2 hex>/<64 hex>` (the layout of an extracted bundle's `data/assets`).
///
/// Each file is hashed once, when a record first names it; when it is copied later, its size, inode and times must be
/// unchanged, so a file edited during a run is detected without hashing it twice.
public final class DirectoryAssetProvider: AssetProvider, InputFileSet {
    /// The directory.
    public let root: String
    private let realRoot: String
    private let state = Mutex(State())

    /// Every file read or found, once each, kept small: a bundle may have hundreds of thousands of assets.
    private struct State {
        var files: [Stored] = []
        /// A path records named → its file.
        var byPath: [String: Int] = [:]
        /// A digest → the first file with it (the one copied).
        var byDigest: [SHA256Digest: Int] = [:]
    }

    private struct Stored: Sendable {
        /// Relative to the root: as records name it, or `sha256/<2 hex>/<64 hex>` for a file found by content.
        var path: String
        var digest: SHA256Digest
        /// The version hashed (or found); its size is the asset's.
        var signature: FileSignature
        /// Whether the digest was computed from the file (rather than taken from its name).
        var verified: Bool
    }

    /// Uses files under `root`.
    /// - Throws: ``RecordError`` when the directory does not exist.
    public init(root: String) throws {
        self.root = root
        guard let resolved = Self.realPath(root), Self.isDirectory(resolved) else {
            throw CoreError(.fileNotFound, "\(root): the assets directory does not exist")
        }
        realRoot = resolved
    }

    /// Hashes the file at `path` (relative to the root) and returns its asset; used as the JSON decoder's resolver.
    ///
    /// The asset's file name is `fileName`, else the path's last component.
    /// - Throws: ``RecordError`` when the path leaves the directory or the file cannot be read.
    public func resolve(path: String, fileName: String?) throws -> Asset {
        let name = fileName ?? String(path.split(separator: "/").last ?? Substring(path))
        if let known = state.withLock({ state in state.byPath[path].map { state.files[$0] } }) {
            return Asset(sha256: known.digest, size: known.signature.size, fileName: name)
        }
        let file = try AssetFile(hashing: try checkedPath(path), fileName: name)
        state.withLock { state in
            guard state.byPath[path] == nil else { return }  // hashed by another thread meanwhile
            state.files.append(Stored(path: path, digest: file.asset.sha256, signature: file.signature, verified: true))
            state.byPath[path] = state.files.count - 1
            if state.byDigest[file.asset.sha256] == nil { state.byDigest[file.asset.sha256] = state.files.count - 1 }
        }
        return file.asset
    }

    /// The asset file with this identity, among those read so far (so that no output of the run replaces one).
    public func inputDescription(of identity: FileIdentity) -> String? {
        state.withLock { state in state.files.first { $0.signature.identity == identity }.map { "the asset \(root)/\($0.path)" } }
    }

    public func canProvide(_ asset: Asset) -> Bool {
        if let size = state.withLock({ state in state.byDigest[asset.sha256].map { state.files[$0].signature.size } }) {
            return size == asset.size
        }
        let hex = asset.sha256.hex
        let path = "sha256/\(hex.prefix(2))/\(hex)"
        guard let signature = FileSignature(path: "\(realRoot)/\(path)"), signature.isRegularFile, signature.size == asset.size else {
            return false
        }
        state.withLock { state in
            guard state.byDigest[asset.sha256] == nil else { return }
            state.files.append(Stored(path: path, digest: asset.sha256, signature: signature, verified: false))
            state.byDigest[asset.sha256] = state.files.count - 1
        }
        return true
    }

    public func open(_ asset: Asset) throws -> any AssetReading {
        func stored() -> Stored? { state.withLock { state in state.byDigest[asset.sha256].map { state.files[$0] } } }
        guard let file = stored() ?? (canProvide(asset) ? stored() : nil) else {
            throw RecordError(.assetUnavailable, at: "", "asset \(asset.sha256) is not in \(root)")
        }
        return try FileAssetReader(path: "\(realRoot)/\(file.path)", expected: file.signature, verified: file.verified)
    }

    /// The absolute path of a relative asset path, refusing anything that leaves the root.
    private func checkedPath(_ path: String) throws -> String {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.utf8.contains(0) else {
            throw RecordError(.assetUnavailable, at: "", "asset paths are relative to the assets directory, not \"\(path)\"")
        }
        if path.split(separator: "/").contains("..") {
            throw RecordError(.assetUnavailable, at: "", "asset path \"\(path)\" climbs out of the assets directory")
        }
        let joined = "\(realRoot)/\(path)"
        guard let resolved = Self.realPath(joined) else {
            throw RecordError(.assetUnavailable, at: "", "asset file \(root)/\(path) does not exist")
        }
        guard resolved.hasPrefix(realRoot + "/") else {
            throw RecordError(.assetUnavailable, at: "", "asset path \"\(path)\" leads out of the assets directory (through a link)")
        }
        guard let signature = FileSignature(path: resolved), signature.isRegularFile else {
            throw RecordError(.assetUnavailable, at: "", "asset \(root)/\(path) is not a regular file")
        }
        return resolved
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}

/// Reads an asset file, checking at the end that it is the version that was hashed.
final class FileAssetReader: AssetReading {
    let isVerified: Bool
    private let file: InputFile
    private let expected: FileSignature

    init(path: String, expected: FileSignature, verified: Bool) throws {
        file = try InputFile(path: path)
        self.expected = expected
        isVerified = verified
        guard FileSignature(descriptorOf: file) == expected else {
            throw RecordError(.assetUnavailable, at: "", "\(path) changed after it was hashed; run again")
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try file.read(into: buffer) }

    func finish() throws {
        guard FileSignature(descriptorOf: file) == expected else {
            throw RecordError(.assetUnavailable, at: "", "\(file.path) changed while it was being copied; run again")
        }
    }
}
