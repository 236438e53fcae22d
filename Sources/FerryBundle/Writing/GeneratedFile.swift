import FerryCore
import FerryRecords
import FerrySorting

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

    /// `manifest-sha256.txt`: the assets' lines first, in digest order (their paths, `data/assets/…`, sort before every
    /// other payload path), then the other payload files' in path order, the order of ``BagIt/manifest(_:)``.
    /// - Parameters:
    ///   - assets: sorted by digest.
    ///   - metadata: the other payload files that are not record files (`manifest.json`, `schema.json`).
    ///   - records: the record and deletion files.
    static func payloadManifest(
        assets: ExternalSortedSet<AssetEntry>, metadata: [(path: String, digest: SHA256Digest)], records: SpoolPlan
    ) throws -> GeneratedFile {
        let metadata = BagIt.sorted(metadata)
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
            // The record files come in path order; the few metadata files are merged in among them.
            var others = metadata[...]
            try records.forEachPath { path, digest in
                while let next = others.first, next.path.utf8.lexicographicallyPrecedes(path.utf8) {
                    try line(next.path, next.digest)
                    others.removeFirst()
                }
                try line(path, digest)
            }
            for other in others { try line(other.path, other.digest) }
            if !piece.isEmpty { try emit(piece) }
        }
    }
}
