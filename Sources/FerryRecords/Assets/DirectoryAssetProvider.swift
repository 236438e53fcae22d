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

    private struct State {
        var byPath: [String: Entry] = [:]
        var byDigest: [SHA256Digest: Entry] = [:]
    }

    private struct Entry: Sendable {
        var path: String
        var asset: Asset
        var signature: FileSignature
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
    /// - Throws: ``RecordError`` when the path leaves the directory or the file cannot be read.
    public func resolve(path: String, fileName: String?) throws -> Asset {
        if let known = state.withLock({ $0.byPath[path] }) {
            var asset = known.asset
            asset.fileName = fileName ?? asset.fileName
            return asset
        }
        let full = try checkedPath(path)
        let file = try AssetFile(hashing: full, fileName: fileName ?? String(path.split(separator: "/").last ?? Substring(path)))
        let entry = Entry(path: full, asset: file.asset, signature: file.signature, verified: true)
        state.withLock { state in
            state.byPath[path] = entry
            if state.byDigest[file.asset.sha256] == nil { state.byDigest[file.asset.sha256] = entry }
        }
        return file.asset
    }

    /// The asset file with this identity, among those read so far (so that no output of the run replaces one).
    public func inputDescription(of identity: FileIdentity) -> String? {
        state.withLock { state in
            if let (path, _) = state.byPath.first(where: { $0.value.signature.identity == identity }) { return "the asset \(root)/\(path)" }
            return state.byDigest.values.first { $0.signature.identity == identity }.map { "the asset \($0.path)" }
        }
    }

    public func canProvide(_ asset: Asset) -> Bool {
        if let entry = state.withLock({ $0.byDigest[asset.sha256] }) { return entry.asset.size == asset.size }
        let hex = asset.sha256.hex
        let candidate = "\(realRoot)/sha256/\(hex.prefix(2))/\(hex)"
        guard let signature = FileSignature(path: candidate), signature.isRegularFile, signature.size == asset.size else {
            return false
        }
        let entry = Entry(path: candidate, asset: asset, signature: signature, verified: false)
        state.withLock { $0.byDigest[asset.sha256] = entry }
        return true
    }

    public func open(_ asset: Asset) throws -> any AssetReading {
        guard let entry = state.withLock({ $0.byDigest[asset.sha256] }) ?? (canProvide(asset) ? state.withLock({ $0.byDigest[asset.sha256] }) : nil)
        else {
            throw RecordError(.assetUnavailable, at: "", "asset \(asset.sha256) is not in \(root)")
        }
        return try FileAssetReader(path: entry.path, expected: entry.signature, verified: entry.verified)
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
