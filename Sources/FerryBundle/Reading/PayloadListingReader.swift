import FerryCore
import FerrySorting

/// Reads a payload manifest into a ``PayloadListing`` as its bytes arrive, never holding it whole: its files are
/// sorted in bounded memory, by digest for the assets and by path for the others.
package final class PayloadListingReader {
    private var lines = ManifestEntryReader(file: BundleLayout.payloadManifestFile)
    /// The other files: each one's path (as a key) and digest.
    private let files: ExternalByteSorter
    private var record = ByteRecordWriter()
    private let assets: ExternalSorter<SHA256Digest>
    private var misnamedAsset: String?
    private let temporaryDirectory: String?
    private let memoryLimit: Int

    /// A reader whose asset digests beyond `memoryLimit` bytes go to scratch files under `temporaryDirectory`
    /// (default `$TMPDIR`); a set in a scratch file keeps far less in memory.
    package init(temporaryDirectory: String?, memoryLimit: Int = 4 << 20) {
        self.temporaryDirectory = temporaryDirectory
        self.memoryLimit = memoryLimit
        assets = ExternalSorter(memoryLimit: memoryLimit, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory)
        files = ExternalByteSorter(memoryLimit: memoryLimit, prefix: Self.filesPrefix, temporaryDirectory: temporaryDirectory)
    }
    private static let scratchPrefix = "ferry-listed-assets"
    private static let filesPrefix = "ferry-listed-files"

    /// Reads the entries whose lines end in this piece of the manifest.
    /// - Throws: ``BundleError`` (`invalidMetadata`) for a malformed line or a file listed twice; ``CoreError`` when
    ///   a scratch file cannot be written.
    package func feed(_ piece: UnsafeRawBufferPointer) throws {
        try lines.feed(piece) { try add($0, $1) }
    }

    /// Ends the manifest.
    /// - Throws: as ``feed(_:)``; a file listed twice is found only now.
    package func finish() throws -> PayloadListing {
        try lines.finish { try add($0, $1) }
        let set = try ExternalSortedSet(taking: assets, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory) { twice in
            throw Self.listedTwice(BundleLayout.assetPath(twice))
        }
        let table = try SortedByteTable(
            taking: files, prefix: Self.filesPrefix, temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit,
            split: { record in
                var entry = ByteRecordReader(record)
                return (Array(try entry.key().utf8), entry.rest())
            },
            repeated: { path in throw Self.listedTwice(String(decoding: path, as: UTF8.self)) })
        return PayloadListing(files: table, assets: set, misnamedAsset: misnamedAsset)
    }

    private static func listedTwice(_ path: String) -> BundleError {
        BundleError(.invalidMetadata, "\(BundleLayout.payloadManifestFile) lists \(path) twice")
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
        } else {
            record.removeAll()
            record.key(path)
            digest.withUnsafeBytes { record.raw($0) }
            try files.append(record.bytes)
        }
    }
}
