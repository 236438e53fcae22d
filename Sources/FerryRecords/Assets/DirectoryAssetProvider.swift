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
/// unchanged, so a file edited during a run is detected without hashing it twice. The files read or found are kept in
/// an ``AssetFileIndex``, in bounded memory however many there are; the paths records named lately are remembered
/// too, so that a path named again is not hashed again (one named again much later is hashed again: the same file
/// gives the same asset).
public final class DirectoryAssetProvider: AssetProvider, InputFileSet {
    /// The directory.
    public let root: String
    private let realRoot: String
    private let state: Mutex<State>

    private struct State: ~Copyable {
        let index: AssetFileIndex
        /// Paths records named lately → their assets.
        var recentPaths: [String: Asset] = [:]
    }

    /// How many paths are remembered before the table starts again.
    static let recentPathLimit = 1 << 14

    /// Uses files under `root`.
    /// - Parameter temporaryDirectory: where the index of the files read goes when it leaves memory (default
    ///   `$TMPDIR`).
    /// - Throws: ``CoreError`` when the directory does not exist or the index's scratch directory cannot be made.
    public convenience init(root: String, temporaryDirectory: String? = nil) throws {
        try self.init(root: root, temporaryDirectory: temporaryDirectory, tableLimit: 1 << 14)
    }

    /// Uses files under `root`, keeping at most `tableLimit` files in memory.
    package init(root: String, temporaryDirectory: String?, tableLimit: Int) throws {
        self.root = root
        guard let resolved = Self.realPath(root), Self.isDirectory(resolved) else {
            var info = stat()
            if stat(root, &info) == 0 {
                throw CoreError(
                    .fileNotFound, "\(root): --assets names a file; give the directory that holds the asset files (paths are relative to it)")
            }
            throw CoreError(.fileNotFound, "\(root): the assets directory does not exist")
        }
        realRoot = resolved
        state = Mutex(State(index: try AssetFileIndex(temporaryDirectory: temporaryDirectory, tableLimit: tableLimit)))
    }

    /// Hashes the file at `path` (relative to the root) and returns its asset; used as the JSON decoder's resolver.
    ///
    /// The asset's file name is `fileName`, else the path's last component.
    /// - Throws: ``RecordError`` when the path leaves the directory or the file cannot be read; ``CoreError`` when the
    ///   index's scratch files cannot be written.
    public func resolve(path: String, fileName: String?) throws -> Asset {
        let name = fileName ?? String(path.split(separator: "/").last ?? Substring(path))
        if var known = state.withLock({ $0.recentPaths[path] }) {
            known.fileName = name
            return known
        }
        let file = try AssetFile(hashing: try checkedPath(path), fileName: name)
        try state.withLock { state in
            try state.index.add(digest: file.asset.sha256, path: path, signature: file.signature, verified: true)
            if state.recentPaths.count >= Self.recentPathLimit { state.recentPaths.removeAll(keepingCapacity: true) }
            state.recentPaths[path] = file.asset
        }
        return file.asset
    }

    /// The asset file with this identity, among those read so far (so that no output of the run replaces one).
    public func inputDescription(of identity: FileIdentity) -> String? {
        // A scratch file that cannot be read says nothing; the output is checked against the other inputs still.
        (try? state.withLock { try $0.index.path(of: identity) })?.map { "the asset \(root)/\($0)" }
    }

    public func canProvide(_ asset: Asset) throws -> Bool {
        try file(of: asset)?.signature.size == asset.size
    }

    public func open(_ asset: Asset) throws -> any AssetReading {
        guard let file = try file(of: asset) else {
            throw RecordError(.assetUnavailable, at: "", "asset \(asset.sha256) is not in \(root)")
        }
        let path = try state.withLock { try $0.index.path(of: file) }
        guard file.signature.size == asset.size else {
            throw RecordError(
                .assetUnavailable, at: "", "asset \(asset.sha256) is \(asset.size) bytes, but its file \(root)/\(path) is \(file.signature.size)")
        }
        return try FileAssetReader(path: "\(realRoot)/\(path)", expected: file.signature, verified: file.verified)
    }

    /// The file with an asset's digest: among those read, or else at its place by content, if one of the asset's size
    /// is there now; `nil` when there is none.
    private func file(of asset: Asset) throws -> AssetFileIndex.Entry? {
        if let known = try state.withLock({ try $0.index.entry(for: asset.sha256) }) { return known }
        let hex = asset.sha256.hex
        let path = "sha256/\(hex.prefix(2))/\(hex)"
        guard let signature = FileSignature(path: "\(realRoot)/\(path)"), signature.isRegularFile, signature.size == asset.size else {
            return nil
        }
        return try state.withLock { state in
            try state.index.add(digest: asset.sha256, path: path, signature: signature, verified: false)
            return try state.index.entry(for: asset.sha256)
        }
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
///
/// Sendable for positional reads (`pread`, which leaves the file's position alone); sequential reads and ``finish()``
/// are the opening thread's.
final class FileAssetReader: PositionalAssetReading, @unchecked Sendable {
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

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int { try file.read(into: buffer, at: offset) }

    func finish() throws {
        guard FileSignature(descriptorOf: file) == expected else {
            throw RecordError(.assetUnavailable, at: "", "\(file.path) changed while it was being copied; run again")
        }
    }
}
