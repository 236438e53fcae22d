import FerryBackend
import FerryBundle
import FerryCore
import FerryLocalStore
import FerryRecords
import Foundation

/// The records and deletions of a bundle (checked as they are read).
public final class BundleChangeSource: ChangeSource {
    public let reader: BundleReader
    let path: String
    /// The assets extracted by ``stageAssets(temporaryDirectory:)``, with the directory that holds them.
    private var staged: (directory: TemporaryDirectory, provider: DirectoryAssetProvider)?

    /// Opens a bundle.
    /// - Parameter temporaryDirectory: where scratch files go when the bundle lists many assets (default `$TMPDIR`).
    public init(path: String, temporaryDirectory: String? = nil) throws {
        self.path = path
        reader = try BundleReader(path: path, temporaryDirectory: temporaryDirectory)
    }

    public var kind: String { "bundle" }
    public var description: String { URL(fileURLWithPath: path).lastPathComponent }
    /// A bundle's assets follow its records: ``prepare(for:)`` streams them into a store first, and a writer that
    /// needs them as the records come (another bundle) has them extracted by ``stageAssets(temporaryDirectory:)``.
    public var assets: (any AssetProvider)? { staged?.provider }

    /// Extracts the bundle's assets, each checked against the manifest, into a scratch directory (removed with the
    /// source), so that ``assets`` supplies them while the records are read: a bundle copied into a bundle.
    /// - Returns: how many assets, and their bytes.
    public func stageAssets(temporaryDirectory: String?) throws -> (assets: Int, bytes: Int64) {
        let directory = try TemporaryDirectory(prefix: "ferry-assets", parent: temporaryDirectory)
        let sink = FileAssetSink(root: directory.path)
        try reader.forEachAsset(into: sink)
        staged = (directory, try DirectoryAssetProvider(root: directory.path, temporaryDirectory: temporaryDirectory))
        return (sink.count, sink.bytes)
    }

    public var expectedChanges: Int? { reader.manifest.recordCount + reader.manifest.deletionCount }

    /// The preset of a bundle copied from a Core Data store, as its manifest's source description names it.
    public var mappingPreset: String? {
        let source = reader.manifest.source
        return source.kind == "core-data" ? CoreDataChangeSource.preset(inDescription: source.description) : nil
    }

    public var fingerprint: String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? Int64) ?? (attributes?[.size] as? Int).map(Int64.init) ?? -1
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "bundle|\(path)|\(size)|\(modified)"
    }

    public func canSupply(_ asset: Asset) throws -> Bool { try reader.listsAsset(asset.sha256) }

    public func prepare(for store: LocalStore) throws -> (assets: Int, bytes: Int64) {
        let sink = StoreAssetSink(store: store)
        try reader.forEachAsset(into: sink)
        return (sink.stored, sink.bytes)
    }

    /// Streams the bundle's assets that the target lacks into it, before the records that use them.
    ///
    /// Called on a thread outside the cooperative pool: it waits for the target's async calls.
    public func prepare(for target: any RecordStore) throws -> (assets: Int, bytes: Int64) {
        let sink = BackendAssetSink(target: target)
        try reader.forEachAsset(into: sink)
        return (sink.stored, sink.bytes)
    }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        var line = 0
        let description = description
        try reader.forEachChange { change in
            line += 1
            try body(SourceChange(change, origin: description, separator: " change ", number: Int64(line)))
        }
    }
}

/// Streams a bundle's assets into a local store, skipping those it holds.
private final class StoreAssetSink: BundleAssetSink {
    let store: LocalStore
    var upload: AssetUpload?
    var stored = 0
    var bytes: Int64 = 0

    init(store: LocalStore) { self.store = store }

    func wants(_ digest: SHA256Digest, size: Int64?) -> Bool { !store.hasAsset(digest) }
    func begin(_ digest: SHA256Digest) throws { upload = try AssetUpload(store: store, digest: digest) }
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try upload?.append(bytes)
        self.bytes += Int64(bytes.count)
    }

    func end(_ digest: SHA256Digest) throws {
        // Not counted when another writer of the store stored the same asset first.
        if try upload?.finish() == true { stored += 1 }
        upload = nil
    }
}

/// Streams a bundle's assets into a backend, skipping those it holds: each asset's bytes go from the reading thread
/// to the backend's upload task through a bounded channel.
private final class BackendAssetSink: BundleAssetSink {
    let target: any RecordStore
    var stored = 0
    var bytes: Int64 = 0
    private var sizes: [SHA256Digest: Int64] = [:]
    private var upload: (channel: PieceChannel, task: Task<Bool, any Error>)?

    init(target: any RecordStore) { self.target = target }

    func wants(_ digest: SHA256Digest, size: Int64?) -> Bool {
        // Without a declared size the asset is read, and `begin` says why it cannot be stored.
        guard let size else { return true }
        sizes[digest] = size
        let (target, asset) = (self.target, Asset(sha256: digest, size: size))
        return (try? AsyncBridge.wait { try await !target.missingAssets([asset]).isEmpty }) ?? true
    }

    func begin(_ digest: SHA256Digest) throws {
        guard let size = sizes[digest] else {
            throw TransferError(.unsupported, "asset \(digest): the bundle declares no size for it; unpack the bundle and copy from the directory")
        }
        let channel = PieceChannel()
        let (target, asset) = (self.target, Asset(sha256: digest, size: size))
        upload = (
            channel,
            Task {
                // However the upload ends, the reading thread must not wait for room any more.
                defer { channel.cancel() }
                return try await target.putAsset(asset, bytes: channel.bytes)
            }
        )
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let upload else { return }
        do {
            try upload.channel.push(Array(bytes))
        } catch is PieceChannel.Cancelled {
            // The backend stopped reading: its error says why.
            _ = try AsyncBridge.wait { try await upload.task.value }
        }
        self.bytes += Int64(bytes.count)
    }

    func end(_ digest: SHA256Digest) throws {
        guard let upload else { return }
        self.upload = nil
        upload.channel.finish()
        if try AsyncBridge.wait({ try await upload.task.value }) { stored += 1 }
    }

    deinit {
        // A reading that failed mid-asset: the backend's upload ends with the error, storing nothing.
        upload?.channel.finish(throwing: CancellationError())
    }
}

/// Writes a bundle's assets as content-addressed files (`sha256/<2 hex>/<64 hex>`) under a directory.
private final class FileAssetSink: BundleAssetSink {
    let root: String
    var count = 0
    var bytes: Int64 = 0
    private var file: OutputFile?

    init(root: String) { self.root = root }

    func wants(_ digest: SHA256Digest, size: Int64?) -> Bool { true }

    func begin(_ digest: SHA256Digest) throws {
        let hex = digest.hex
        let folder = "\(root)/sha256/\(hex.prefix(2))"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CoreError(.writeFailed, "\(folder): cannot create a scratch directory for the bundle's assets", cause: error)
        }
        file = try OutputFile(path: "\(folder)/\(hex)")
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try file?.write(bytes)
        self.bytes += Int64(bytes.count)
    }

    func end(_ digest: SHA256Digest) throws {
        try file?.close()
        file = nil
        count += 1
    }
}
