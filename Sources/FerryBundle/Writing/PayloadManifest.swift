import FerryCore

/// A bundle's `manifest-sha256.txt`, made line by line each time it is needed rather than held: a bundle may hold a
/// million assets, whose lines would take 150 MB.
///
/// The assets' lines come first, in digest order (their paths, `data/assets/…`, sort before every other payload
/// path), then the other payload files' in path order: the order of ``BagIt/manifest(_:)``.
struct PayloadManifest {
    /// The assets, sorted by digest.
    let assets: [(digest: SHA256Digest, size: Int64)]
    /// The other payload files (metadata, records, deletions), sorted by path.
    let files: [(path: String, digest: SHA256Digest)]
    /// Its length in bytes and its SHA-256, from one pass over its lines.
    let size: Int64
    let digest: SHA256Digest

    init(assets: [(digest: SHA256Digest, size: Int64)], files: [(path: String, digest: SHA256Digest)]) {
        self.assets = assets
        self.files = BagIt.sorted(files)
        var hasher = SHA256Hasher()
        var size: Int64 = 0
        Self.forEachChunk(assets: assets, files: self.files) { chunk in
            chunk.withUnsafeBytes { hasher.update($0) }
            size += Int64(chunk.count)
        }
        self.size = size
        digest = hasher.finalize()
    }

    /// Calls `body` with the manifest's bytes in order, in chunks of about 64 KiB.
    func forEachChunk(_ body: ([UInt8]) throws -> Void) rethrows {
        try Self.forEachChunk(assets: assets, files: files, body)
    }

    private static func forEachChunk(
        assets: [(digest: SHA256Digest, size: Int64)], files: [(path: String, digest: SHA256Digest)], _ body: ([UInt8]) throws -> Void
    ) rethrows {
        var chunk: [UInt8] = []
        chunk.reserveCapacity(1 << 16 + 4096)
        func flush(atLeast limit: Int) throws {
            guard chunk.count >= limit, !chunk.isEmpty else { return }
            try body(chunk)
            chunk.removeAll(keepingCapacity: true)
        }
        for asset in assets {
            BagIt.appendLine(to: &chunk, path: BundleLayout.assetPath(asset.digest), digest: asset.digest)
            try flush(atLeast: 1 << 16)
        }
        for file in files {
            BagIt.appendLine(to: &chunk, path: file.path, digest: file.digest)
            try flush(atLeast: 1 << 16)
        }
        try flush(atLeast: 1)
    }
}
