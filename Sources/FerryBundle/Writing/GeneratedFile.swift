import FerryCore
import FerryRecords

/// A file of the bundle made piece by piece whenever it is needed (once to learn its size and SHA-256, again to write
/// it), never held whole: a bundle may list a million assets or a hundred thousand record files.
struct GeneratedFile {
    /// Its length in bytes.
    let size: Int64
    /// Its SHA-256.
    let digest: SHA256Digest
    private let generate: (([UInt8]) throws -> Void) throws -> Void

    /// A file whose bytes `generate` hands, in order and in pieces, to the function it is given.
    init(_ generate: @escaping (([UInt8]) throws -> Void) throws -> Void) throws {
        var hasher = SHA256Hasher()
        var size: Int64 = 0
        try generate { piece in
            piece.withUnsafeBytes { hasher.update($0) }
            size += Int64(piece.count)
        }
        self.size = size
        digest = hasher.finalize()
        self.generate = generate
    }

    /// Calls `body` with the file's bytes, in order and in pieces.
    func forEachPiece(_ body: ([UInt8]) throws -> Void) throws {
        try generate(body)
    }

    /// `manifest.json`.
    static func manifest(_ manifest: BundleManifest) throws -> GeneratedFile {
        try GeneratedFile { emit in try manifest.writePretty(emit) }
    }

    /// `schema.json`.
    static func schema(_ schema: RecordSchema) throws -> GeneratedFile {
        try GeneratedFile { emit in try schema.writePretty(emit) }
    }

    /// `manifest-sha256.txt`: the assets' lines first, in digest order (their paths, `data/assets/…`, sort before every
    /// other payload path), then the other payload files' in path order, the order of ``BagIt/manifest(_:)``.
    /// - Parameters:
    ///   - assets: sorted by digest.
    ///   - files: every other payload file (metadata, records, deletions).
    static func payloadManifest(assets: ExternalSortedSet<AssetEntry>, files: [(path: String, digest: SHA256Digest)]) throws
        -> GeneratedFile
    {
        let files = BagIt.sorted(files)
        return try GeneratedFile { emit in
            var piece: [UInt8] = []
            piece.reserveCapacity(1 << 16 + 4096)
            func line(_ path: String, _ digest: SHA256Digest) throws {
                BagIt.appendLine(to: &piece, path: path, digest: digest)
                guard piece.count >= 1 << 16 else { return }
                try emit(piece)
                piece.removeAll(keepingCapacity: true)
            }
            try assets.forEach { asset in try line(BundleLayout.assetPath(asset.digest), asset.digest) }
            for file in files { try line(file.path, file.digest) }
            if !piece.isEmpty { try emit(piece) }
        }
    }
}
