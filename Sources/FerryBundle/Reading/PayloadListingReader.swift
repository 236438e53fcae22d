import FerryCore

/// Reads a payload manifest into a ``PayloadListing`` as its bytes arrive, never holding it whole.
package final class PayloadListingReader {
    private var lines = ManifestEntryReader(file: BundleLayout.payloadManifestFile)
    private var digests: [String: SHA256Digest] = [:]
    private let assets: ExternalSorter<SHA256Digest>
    private var misnamedAsset: String?
    private let temporaryDirectory: String?

    /// A reader whose asset digests beyond `memoryLimit` bytes go to scratch files under `temporaryDirectory`
    /// (default `$TMPDIR`); a set in a scratch file keeps far less in memory.
    package init(temporaryDirectory: String?, memoryLimit: Int = 4 << 20) {
        self.temporaryDirectory = temporaryDirectory
        assets = ExternalSorter(memoryLimit: memoryLimit, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory)
    }
    private static let scratchPrefix = "ferry-listed-assets"

    /// Reads the entries whose lines end in this piece of the manifest.
    /// - Throws: ``BundleError`` (`invalidMetadata`) for a malformed line or a file listed twice; ``CoreError`` when
    ///   a scratch file cannot be written.
    package func feed(_ piece: UnsafeRawBufferPointer) throws {
        try lines.feed(piece) { try add($0, $1) }
    }

    /// Ends the manifest.
    /// - Throws: as ``feed(_:)``; an asset listed twice is found only now.
    package func finish() throws -> PayloadListing {
        try lines.finish { try add($0, $1) }
        let set = try ExternalSortedSet(taking: assets, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory) { twice in
            throw BundleError(.invalidMetadata, "\(BundleLayout.payloadManifestFile) lists \(BundleLayout.assetPath(twice)) twice")
        }
        return PayloadListing(digests: digests, assets: set, misnamedAsset: misnamedAsset)
    }

    /// Reads a whole manifest, pulling its bytes from `read` (which returns 0 at the end).
    package static func read(
        _ read: (UnsafeMutableRawBufferPointer) throws -> Int, temporaryDirectory: String?, memoryLimit: Int = 4 << 20
    ) throws -> PayloadListing {
        let reader = PayloadListingReader(temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try read($0) }
            if count == 0 { return try reader.finish() }
            try chunk.withUnsafeBytes { try reader.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    private func add(_ path: String, _ digest: SHA256Digest) throws {
        if let named = BundleLayout.assetDigest(inPath: path) {
            if named != digest, misnamedAsset == nil { misnamedAsset = path }
            try assets.append(named)
        } else if digests.updateValue(digest, forKey: path) != nil {
            throw BundleError(.invalidMetadata, "\(BundleLayout.payloadManifestFile) lists \(path) twice")
        }
    }
}
