import FerryCore
import FerryRecords
import FerrySorting

/// Receives a bundle's assets as they stream by (see ``BundleReader/forEachAsset(into:)``).
public protocol BundleAssetSink: AnyObject {
    /// Whether to read this asset's bytes (an asset the target already holds can be skipped); `size` is what the
    /// archive declares, when it does.
    func wants(_ digest: SHA256Digest, size: Int64?) -> Bool
    /// The asset's bytes begin.
    func begin(_ digest: SHA256Digest) throws
    /// The next bytes.
    func append(_ bytes: UnsafeRawBufferPointer) throws
    /// The asset ended, its SHA-256 checked against the bundle's manifest.
    func end(_ digest: SHA256Digest) throws
}

extension BundleReader {
    /// Streams every asset the sink wants into it, checking each against the manifest.
    /// - Throws: ``BundleError`` on the first problem (a checksum mismatch, a hostile entry), before `end` is called
    ///   for the asset concerned.
    public func forEachAsset(into sink: any BundleAssetSink) throws {
        try scan(AssetStreamer(sink: sink), complete: false)
    }
}

private final class AssetStreamer: BundleVisitor {
    let sink: any BundleAssetSink

    init(sink: any BundleAssetSink) { self.sink = sink }

    func wants(_ entry: BundleEntry) -> Bool {
        if case .asset(let digest) = entry.kind { return sink.wants(digest, size: entry.declaredSize) }
        return false
    }

    func begin(_ entry: BundleEntry) throws {
        if case .asset(let digest) = entry.kind { try sink.begin(digest) }
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws { try sink.append(bytes) }

    func end(_ entry: BundleEntry, intact: Bool) throws {
        guard case .asset(let digest) = entry.kind else { return }
        guard intact else { throw BundleError(.checksumMismatch, "\(entry.path): its bytes do not match the manifest's SHA-256") }
        try sink.end(digest)
    }

    func issue(_ error: BundleError) throws { throw error }
}

extension BundleReader {
    /// Whether the bundle's manifest lists an asset with this digest.
    /// - Throws: ``CoreError`` when the scratch file of a large bundle's asset list cannot be read.
    public func listsAsset(_ digest: SHA256Digest) throws -> Bool {
        try metadata.assets.contains(digest)
    }
}
