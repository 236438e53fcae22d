import FerryBundle
import FerryCore
import FerryLocalStore
import FerryRecords
import Foundation

/// The records and deletions of a bundle (checked as they are read).
public final class BundleChangeSource: ChangeSource {
    public let reader: BundleReader
    let path: String

    /// Opens a bundle.
    /// - Parameter temporaryDirectory: where scratch files go when the bundle lists many assets (default `$TMPDIR`).
    public init(path: String, temporaryDirectory: String? = nil) throws {
        self.path = path
        reader = try BundleReader(path: path, temporaryDirectory: temporaryDirectory)
    }

    public var kind: String { "bundle" }
    public var description: String { URL(fileURLWithPath: path).lastPathComponent }
    /// A bundle's assets follow its records; ``prepare(for:)`` streams them into a local store first.
    public var assets: (any AssetProvider)? { nil }

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

    func wants(_ digest: SHA256Digest) -> Bool { !store.hasAsset(digest) }
    func begin(_ digest: SHA256Digest) throws { upload = try AssetUpload(store: store, digest: digest) }
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try upload?.append(bytes)
        self.bytes += Int64(bytes.count)
    }

    func end(_ digest: SHA256Digest) throws {
        try upload?.finish()
        stored += 1
        upload = nil
    }
}
