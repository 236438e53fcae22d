import FerryCore
import FerryJSON
import FerryRecords
import FerrySorting

/// The tag files and JSON metadata of a bundle, checked against each other.
package struct BundleMetadata {
    var bagInfo: BagInfo
    /// Every payload file but the assets, by path (relative to the base): its expected digest, and what
    /// `manifest.json` says of it.
    var payloadFiles: PayloadFiles
    /// The assets the payload manifest lists: their paths and digests follow from these (a bundle may hold millions,
    /// so they are kept in a set that leaves memory when large).
    var assets: ExternalSortedSet<SHA256Digest>
    /// Tag file path → expected digest.
    var tagDigests: [String: SHA256Digest]
    /// Tag file path → the digest of its bytes as read (the tag manifest's too), which a scan must find again.
    var tagFilesRead: [String: SHA256Digest]
    var manifest: BundleManifest
    /// The record types and their fields (without the zones, which are in ``zones``).
    var schema: RecordSchema
    /// The zones `schema.json` lists.
    var zones: ZoneList

    /// The most bytes read into memory for each metadata file (the payload manifest, `manifest.json` and `schema.json`
    /// are read as they stream, whatever their size).
    package static let sizeLimits: [String: Int] = [
        BundleLayout.bagitFile: 4 << 10, BundleLayout.bagInfoFile: 1 << 20, BundleLayout.payloadManifestFile: Int.max,
        BundleLayout.tagManifestFile: 1 << 20, BundleLayout.manifestFile: Int.max, BundleLayout.schemaFile: Int.max,
    ]

    /// The metadata files read as they stream rather than whole.
    static let streamedFiles: Set = [BundleLayout.payloadManifestFile, BundleLayout.manifestFile, BundleLayout.schemaFile]

    /// A metadata file parsed as it was read: the SHA-256 of all its bytes, and what parsing them gave.
    package struct Parsed<Value> {
        var digest: SHA256Digest
        var value: Result<Value, any Error>

        /// A file parsed as it was read: its digest, and what `parse` gave.
        init(digest: SHA256Digest, value: Result<Value, any Error>) {
            self.digest = digest
            self.value = value
        }

        /// A file whose bytes are all in memory, handed to `parse` piece by piece as if it were read.
        init(bytes: [UInt8], parse: ((UnsafeMutableRawBufferPointer) throws -> Int) throws -> Value) {
            digest = SHA256Hasher.digest(bytes)
            value = Result { try parse(ByteArrayReader(bytes).read) }
        }
    }

    /// Checks the files' contents and their agreement, from the files' bytes (the streamed ones' too).
    package init(files: [String: [UInt8]], archive: String) throws {
        let zones = ZoneList(temporaryDirectory: nil)
        let listing = files[BundleLayout.payloadManifestFile].map { bytes in
            Parsed(bytes: bytes) { try PayloadListingReader.read($0, temporaryDirectory: nil) }
        }
        let manifest = files[BundleLayout.manifestFile].map { bytes in
            Parsed(bytes: bytes) { try BundleManifest(reading: $0) }
        }
        let schema = files[BundleLayout.schemaFile].map { bytes in
            Parsed(bytes: bytes) { try RecordSchema(reading: $0) { try zones.append($0) } }
        }
        try self.init(
            files: files.filter { !Self.streamedFiles.contains($0.key) }, listing: listing, manifest: manifest, schema: schema,
            zones: zones, archive: archive, temporaryDirectory: nil, memoryLimit: 4 << 20)
    }

    /// Checks the files' contents and their agreement.
    /// - Parameters:
    ///   - files: each metadata path but the streamed ones' → its bytes.
    ///   - listing: the payload manifest as read; `nil` when it is missing.
    ///   - manifest: `manifest.json` as read; `nil` when it is missing.
    ///   - schema: `schema.json` as read, its zones handed to `zones`; `nil` when it is missing.
    ///   - zones: the zones `schema.json` lists.
    ///   - temporaryDirectory: where the table of payload files goes when large (default `$TMPDIR`).
    ///   - memoryLimit: about the most bytes of that table kept in memory.
    package init(
        files: [String: [UInt8]], listing parsedListing: Parsed<PayloadListing>?, manifest parsedManifest: Parsed<BundleManifest>?,
        schema parsedSchema: Parsed<RecordSchema>?, zones: ZoneList, archive: String, temporaryDirectory: String?,
        memoryLimit: Int
    ) throws {
        self.zones = zones
        func file(_ name: String) throws -> [UInt8] {
            guard let bytes = files[name] else {
                if name == BundleLayout.bagitFile {
                    throw BundleError(.notABundle, "\(archive): no bagit.txt; this is not a Ferry bundle")
                }
                throw BundleError(.missingEntry, "\(archive): \(name) is missing")
            }
            return bytes
        }
        try BagIt.checkDeclaration(try file(BundleLayout.bagitFile))
        bagInfo = try BagInfo(bytes: try file(BundleLayout.bagInfoFile))
        guard let listing = try parsedListing?.value.get() else {
            throw BundleError(.missingEntry, "\(archive): \(BundleLayout.payloadManifestFile) is missing")
        }
        assets = listing.assets
        tagDigests = try BagIt.parseManifest(try file(BundleLayout.tagManifestFile), file: BundleLayout.tagManifestFile)
        tagFilesRead = files.filter { !$0.key.hasPrefix("data/") }.mapValues(SHA256Hasher.digest)
        tagFilesRead[BundleLayout.payloadManifestFile] = parsedListing?.digest
        for (name, actual) in tagFilesRead where name != BundleLayout.tagManifestFile {
            guard let expected = tagDigests[name] else {
                throw BundleError(.unlistedEntry, "\(archive): tag file \(name) is not in tagmanifest-sha256.txt")
            }
            guard actual == expected else {
                throw BundleError(.checksumMismatch, "\(archive): \(name) has SHA-256 \(actual), the tag manifest says \(expected)")
            }
        }
        for name in [BundleLayout.bagitFile, BundleLayout.bagInfoFile, BundleLayout.payloadManifestFile]
        where tagDigests[name] == nil {
            throw BundleError(.invalidMetadata, "\(archive): tagmanifest-sha256.txt does not list \(name)")
        }
        for (name, digest) in [(BundleLayout.manifestFile, parsedManifest?.digest), (BundleLayout.schemaFile, parsedSchema?.digest)] {
            guard let actual = digest else { throw BundleError(.missingEntry, "\(archive): \(name) is missing") }
            guard let expected = try listing.digest(of: name) else {
                throw BundleError(.unlistedEntry, "\(archive): \(name) is not in manifest-sha256.txt")
            }
            guard actual == expected else {
                throw BundleError(.checksumMismatch, "\(archive): \(name) has SHA-256 \(actual), manifest-sha256.txt says \(expected)")
            }
        }
        guard let parsedManifest, let parsedSchema else { throw BundleError(.missingEntry, "\(archive): metadata is missing") }
        do {
            manifest = try parsedManifest.value.get()
            schema = try parsedSchema.value.get()
        } catch let error as JSONSyntaxError {
            throw BundleError(.invalidMetadata, "\(archive): data/manifest.json or data/schema.json is not JSON \(error)")
        } catch let error as RecordError {
            throw BundleError(.invalidMetadata, "\(archive): data/schema.json: \(error.message)")
        }
        payloadFiles = try PayloadFiles(
            listing: listing.files, described: manifest.files, archive: archive, temporaryDirectory: temporaryDirectory,
            memoryLimit: memoryLimit)
        if let misnamedAsset = listing.misnamedAsset {
            throw BundleError(.checksumMismatch, "\(archive): manifest-sha256.txt gives asset \(misnamedAsset) another SHA-256 than its name")
        }
        if let path = payloadFiles.undescribed {
            throw BundleError(.unlistedEntry, "\(archive): payload file \(path) is not described by data/manifest.json")
        }
        guard assets.count == manifest.assetCount else {
            throw BundleError(
                .invalidMetadata,
                "\(archive): data/manifest.json counts \(manifest.assetCount) assets, manifest-sha256.txt lists \(assets.count)")
        }
        guard bagInfo.payloadFiles == payloadFileCount else {
            throw BundleError(
                .payloadOxumMismatch,
                "\(archive): Payload-Oxum declares \(bagInfo.payloadFiles) files, manifest-sha256.txt lists \(payloadFileCount)")
        }
    }

    /// The files the payload manifest lists.
    var payloadFileCount: Int { payloadFiles.count + assets.count }
}
