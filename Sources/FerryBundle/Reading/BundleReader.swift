import FerryCore
import FerryRecords
import FerrySorting
import Foundation

/// Reads a bundle — an archive file or an extracted bag directory — checking everything as it streams.
///
/// Opening reads only the metadata at the front (tag files, `manifest.json`, `schema.json`) and checks them against
/// each other, so ``manifest`` is available at once (`ferry ls`). A scan then streams every entry once, refusing unsafe
/// entries (absolute paths, `..`, links, devices, duplicates, oversized entries) before reading them and checking
/// every file's SHA-256 against the manifest. Memory does not grow with the bundle's size.
public final class BundleReader {
    /// The bundle's path.
    public let path: String
    /// What the bundle holds.
    public var manifest: BundleManifest { metadata.manifest }
    /// The record types of the bundle and their fields (its zones are in ``zones``).
    public var schema: RecordSchema { metadata.schema }
    /// The zones of the bundle, sorted.
    public var zones: ZoneList { metadata.zones }
    /// The payload's total size (from `Payload-Oxum`).
    public var payloadBytes: Int64 { metadata.bagInfo.payloadBytes }

    let metadata: BundleMetadata
    /// Where scratch files go (the sets of assets listed and seen, the tables of files and zones, when large).
    let temporaryDirectory: String?
    /// Bytes each such set or table keeps in memory before it goes to a scratch file.
    let scratchMemoryLimit: Int
    private let isDirectory: Bool
    private var base: String

    /// Opens a bundle and reads its metadata.
    /// - Parameter temporaryDirectory: where scratch files go when a bundle lists too many assets, files or zones to
    ///   keep them in memory (default `$TMPDIR`).
    /// - Throws: ``BundleError`` for anything malformed or unsafe, ``CoreError`` when the file cannot be opened.
    public convenience init(path: String, temporaryDirectory: String? = nil) throws {
        try self.init(path: path, temporaryDirectory: temporaryDirectory, scratchMemoryLimit: 4 << 20)
    }

    /// Opens a bundle, keeping about `scratchMemoryLimit` bytes of each set of asset digests and each table of files
    /// or zones in memory.
    package init(path: String, temporaryDirectory: String?, scratchMemoryLimit: Int) throws {
        self.path = path
        self.temporaryDirectory = temporaryDirectory
        self.scratchMemoryLimit = scratchMemoryLimit
        var isDirectoryFlag: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectoryFlag) else {
            throw CoreError(.fileNotFound, "\(path): no such bundle; check the path")
        }
        isDirectory = isDirectoryFlag.boolValue
        let read = try Self.readMetadataFiles(
            path: path, isDirectory: isDirectory, temporaryDirectory: temporaryDirectory, memoryLimit: scratchMemoryLimit)
        base = read.base
        metadata = try BundleMetadata(
            files: read.files, listing: read.listing, manifest: read.manifest, schema: read.schema, zones: read.zones, archive: path,
            temporaryDirectory: temporaryDirectory, memoryLimit: scratchMemoryLimit)
    }

    // MARK: - Scanning

    /// Streams the bundle's entries to a visitor.
    /// - Parameters:
    ///   - visitor: what to do with each entry.
    ///   - complete: read and hash every entry and check that nothing is missing (verification, extraction); when
    ///     `false`, entries the visitor does not want are skipped unread.
    ///   - progress: called with payload bytes read so far.
    func scan(_ visitor: any BundleVisitor, complete: Bool, progress: ((Int64) -> Void)? = nil) throws {
        let source = try makeSource()
        // The payload files by rank in the table of them (a bundle may have hundreds of thousands); the other paths
        // (tag files, directories, entries nothing lists) by name.
        var seenFiles = BitSet(capacity: metadata.payloadFiles.count)
        var seen = Set<String>()
        var unlistedNames = 0
        // Assets apart, by digest, and not in memory: a bundle may hold millions. Ferry writes them in digest order,
        // and while they come in that order none can be there twice; otherwise repeats are found after the scan.
        let seenAssets = ExternalSorter<SHA256Digest>(
            memoryLimit: scratchMemoryLimit, prefix: "ferry-seen-assets", temporaryDirectory: temporaryDirectory)
        var lastAsset: SHA256Digest?
        var assetsInOrder = true
        var payloadBytes: Int64 = 0
        var payloadFiles = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while let header = try source.nextEntry() {
            guard let relative = try relativePath(header) else { continue }
            let asset = BundleLayout.assetDigest(inPath: relative)
            var listed: PayloadFiles.Entry?
            if let asset {
                if asset == lastAsset { throw Self.duplicate(relative, in: path) }
                try seenAssets.append(asset)
                if let lastAsset, asset < lastAsset { assetsInOrder = false }
                lastAsset = asset
            } else if let entry = try metadata.payloadFiles.entry(at: relative) {
                guard seenFiles.insert(entry.rank) else { throw Self.duplicate(relative, in: path) }
                listed = entry
            } else if metadata.tagDigests[relative] != nil || metadata.tagFilesRead[relative] != nil {
                guard seen.insert(relative).inserted else { throw Self.duplicate(relative, in: path) }
            } else if header.type == .file, unlistedNames < Self.unlistedNamesKept {
                // Entries nothing lists are each reported as such; the first few are also checked for repeats. A
                // repeated directory is harmless, and keeping every name of millions of entries is not.
                guard seen.insert(relative).inserted else { throw Self.duplicate(relative, in: path) }
                unlistedNames += 1
            }
            switch header.type {
            case .directory: continue
            case .file: break
            default:
                throw BundleError(
                    .unsafeEntry, "\(path): \(relative) is a \(header.type.rawValue); bundles contain only regular files and directories")
            }
            let entry: BundleEntry
            let expected: SHA256Digest
            let limit: Int64
            if let digest = metadata.tagFilesRead[relative] ?? metadata.tagDigests[relative] {
                entry = BundleEntry(path: relative, kind: .tag)
                expected = digest
                limit = Int64(BundleMetadata.sizeLimits[relative] ?? (1 << 20))
            } else if let digest = try asset.flatMap({ try metadata.assets.contains($0) ? $0 : nil }) ?? listed?.digest {
                expected = digest
                if let file = listed?.file {
                    entry = BundleEntry(path: relative, kind: .records(file), rank: listed?.rank)
                    limit = file.bytes
                } else if let asset {
                    entry = BundleEntry(path: relative, kind: .asset(asset), declaredSize: header.declaredSize)
                    limit = max(0, metadata.bagInfo.payloadBytes - payloadBytes)
                } else {
                    entry = BundleEntry(path: relative, kind: .metadata, rank: listed?.rank)
                    limit = Int64(BundleMetadata.sizeLimits[relative] ?? (64 << 20))
                }
            } else {
                try visitor.issue(
                    BundleError(.unlistedEntry, "\(path): \(relative) is not listed in manifest-sha256.txt or tagmanifest-sha256.txt"))
                try source.skip()
                continue
            }
            if case .tag = entry.kind {} else { payloadFiles += 1 }
            if let declared = header.declaredSize, declared > limit {
                try visitor.issue(
                    BundleError(.entryTooLarge, "\(path): \(relative) is \(declared) bytes, more than \(Self.allowance(limit, for: entry))"))
                try source.skip()
                continue
            }
            let wanted = visitor.wants(entry)
            guard wanted || complete else {
                try source.skip()
                continue
            }
            if wanted { try visitor.begin(entry) }
            var hasher = SHA256Hasher()
            var size: Int64 = 0
            var tooLarge = false
            while true {
                let count = try source.read(into: buffer)
                if count == 0 { break }
                size += Int64(count)
                if size > limit {
                    tooLarge = true
                    break
                }
                let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                hasher.update(chunk)
                if wanted { try visitor.consume(chunk) }
            }
            if tooLarge {
                try visitor.issue(BundleError(.entryTooLarge, "\(path): \(relative) is larger than \(Self.allowance(limit, for: entry))"))
                try source.skip()
                if wanted { try visitor.end(entry, intact: false) }
                continue
            }
            if case .tag = entry.kind {
            } else {
                payloadBytes += size
                progress?(payloadBytes)
            }
            let actual = hasher.finalize()
            let intact = actual == expected
            if !intact {
                try visitor.issue(
                    BundleError(.checksumMismatch, "\(path): \(relative) has SHA-256 \(actual), the manifest says \(expected); the bundle is damaged")
                )
            }
            if wanted { try visitor.end(entry, intact: intact) }
        }
        // Assets that came in digest order cannot repeat; the others are sorted to find out.
        guard complete || !assetsInOrder else { return }
        let assetsSeen = try ExternalSortedSet(taking: seenAssets, prefix: "ferry-seen-assets", temporaryDirectory: temporaryDirectory) {
            throw Self.duplicate(BundleLayout.assetPath($0), in: path)
        }
        guard complete else { return }
        for name in metadata.tagDigests.keys.sorted() where !seen.contains(name) {
            try visitor.issue(BundleError(.missingEntry, "\(path): \(name) is listed in tagmanifest-sha256.txt but missing"))
        }
        func missing(_ name: String) throws {
            try visitor.issue(BundleError(.missingEntry, "\(path): \(name) is listed in manifest-sha256.txt but missing"))
        }
        // In path order: the assets' paths ("data/assets/…") sort before the other payload files'.
        try metadata.assets.forEach(notIn: assetsSeen) { try missing(BundleLayout.assetPath($0)) }
        try metadata.payloadFiles.forEach { name, entry in if !seenFiles.contains(entry.rank) { try missing(name) } }
        if payloadBytes != metadata.bagInfo.payloadBytes || payloadFiles != metadata.bagInfo.payloadFiles {
            try visitor.issue(
                BundleError(
                    .payloadOxumMismatch,
                    "\(path): the payload holds \(payloadBytes) bytes in \(payloadFiles) files, Payload-Oxum declares \(metadata.bagInfo.payloadBytes).\(metadata.bagInfo.payloadFiles)"
                ))
        }
    }

    /// What an entry's size limit is, for messages: where it was declared, or why it is the most Ferry reads.
    private static func allowance(_ limit: Int64, for entry: BundleEntry) -> String {
        switch entry.kind {
        case .records: "the \(limit) bytes data/manifest.json declares for it"
        case .asset: "the \(limit) bytes of payload Payload-Oxum (bag-info.txt) leaves for it"
        case .tag, .metadata: "the \(limit) bytes Ferry reads of a file of this kind"
        }
    }

    /// How many names of entries that no manifest lists are kept to find repeats among them.
    static let unlistedNamesKept = 4096

    private static func duplicate(_ relative: String, in archive: String) -> BundleError {
        BundleError(.duplicateEntry, "\(archive): \(relative) appears twice; the bundle is ambiguous and was refused")
    }

    private func makeSource() throws -> any BundleEntrySource {
        isDirectory ? try DirectoryEntrySource(root: path) : try ArchiveReader(path: path)
    }

    /// The path inside the bag, or `nil` for the base directory itself (or the archive's top directory above it).
    private func relativePath(_ header: BundleEntryHeader) throws -> String? {
        let raw = header.path
        guard let normalized = try EntryPath.normalize(raw, isDirectory: header.type == .directory, archive: path) else { return nil }
        if base.isEmpty { return normalized }
        if normalized == base { return nil }
        guard normalized.hasPrefix(base + "/") else {
            throw BundleError(.unsafeEntry, "\(path): entry \(raw) is outside the bag's base directory \(base)/")
        }
        return String(normalized.dropFirst(base.count + 1))
    }

    // MARK: - Metadata

    private static let metadataNames = Set(BundleMetadata.sizeLimits.keys)

    /// The metadata files as read.
    private struct MetadataFiles {
        var files: [String: [UInt8]] = [:]
        var listing: BundleMetadata.Parsed<PayloadListing>?
        var manifest: BundleMetadata.Parsed<BundleManifest>?
        var schema: BundleMetadata.Parsed<RecordSchema>?
        let zones: ZoneList
        var base = ""

        /// Whether a metadata file was read already.
        func has(_ name: String) -> Bool {
            switch name {
            case BundleLayout.payloadManifestFile: listing != nil
            case BundleLayout.manifestFile: manifest != nil
            case BundleLayout.schemaFile: schema != nil
            default: files[name] != nil
            }
        }
    }

    /// Reads the metadata files — the payload manifest, `manifest.json` and `schema.json` as they stream, the others
    /// whole — from the front of the archive when Ferry wrote it, otherwise with one extra pass.
    private static func readMetadataFiles(
        path: String, isDirectory: Bool, temporaryDirectory: String?, memoryLimit: Int
    ) throws -> MetadataFiles {
        let source: any BundleEntrySource = isDirectory ? try DirectoryEntrySource(root: path) : try ArchiveReader(path: path)
        var base: String?
        var read = MetadataFiles(zones: ZoneList(temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit))
        while let header = try source.nextEntry() {
            guard let normalized = try EntryPath.normalize(header.path, isDirectory: header.type == .directory, archive: path) else {
                try source.skip()
                continue
            }
            if base == nil {
                // The bag's base directory is the first component of the first entry (RFC 8493 §4.2), or none.
                if let slash = normalized.firstIndex(of: "/") {
                    base = String(normalized[..<slash])
                } else {
                    base = normalized == "bagit.txt" || header.type == .file ? "" : normalized
                }
            }
            let prefix = base.map { $0.isEmpty ? "" : $0 + "/" } ?? ""
            guard normalized.hasPrefix(prefix) || normalized == base else {
                throw BundleError(.unsafeEntry, "\(path): entry \(header.path) is outside the bag's base directory \(prefix)")
            }
            let relative = String(normalized.dropFirst(prefix.count))
            guard metadataNames.contains(relative), header.type == .file, !read.has(relative) else {
                // Not metadata: skip it. Ferry writes metadata first, so this only happens for bags packed by
                // other tools, which costs one extra pass.
                try source.skip()
                continue
            }
            switch relative {
            case BundleLayout.payloadManifestFile:
                let listing = try parse(source) {
                    try PayloadListingReader.read($0, temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
                }
                // A malformed listing is reported by ``BundleMetadata`` when it needs it, after the checks of
                // `bagit.txt` and `bag-info.txt`, as if it had been read whole; a scratch file that cannot be written
                // is reported now.
                if case .failure(let error) = listing.value, !(error is BundleError) { throw error }
                read.listing = listing
            case BundleLayout.manifestFile:
                read.manifest = try parse(source) { try BundleManifest(reading: $0, temporaryDirectory: temporaryDirectory) }
            case BundleLayout.schemaFile:
                read.schema = try parse(source) { [zones = read.zones] in try RecordSchema(reading: $0) { try zones.append($0) } }
            default:
                let limit = BundleMetadata.sizeLimits[relative] ?? (1 << 20)
                if let declared = header.declaredSize, declared > limit {
                    throw BundleError(.entryTooLarge, "\(path): \(relative) is \(declared) bytes; Ferry reads at most \(limit)")
                }
                read.files[relative] = try readAll(source, limit: limit, name: relative, archive: path)
            }
            if metadataNames.allSatisfy(read.has) { break }
        }
        read.base = base ?? ""
        return read
    }

    /// Parses a metadata file as it streams, hashing every byte of it (the rest too, after a parse error, so that a
    /// damaged file is reported by its checksum first, as if it had been read whole).
    /// - Throws: what reading the entry throws; what parsing throws is in the result.
    private static func parse<Value>(
        _ source: any BundleEntrySource, _ parse: ((UnsafeMutableRawBufferPointer) throws -> Int) throws -> Value
    ) throws -> BundleMetadata.Parsed<Value> {
        var hasher = SHA256Hasher()
        var readError: (any Error)?
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            do {
                let count = try source.read(into: buffer)
                hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                return count
            } catch {
                readError = error
                throw error
            }
        }
        let value = Result { try parse(read) }
        if let readError { throw readError }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while try chunk.withUnsafeMutableBytes({ try read(into: $0) }) > 0 {}
        return BundleMetadata.Parsed(digest: hasher.finalize(), value: value)
    }

    private static func readAll(_ source: any BundleEntrySource, limit: Int, name: String, archive: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else {
                throw BundleError(.entryTooLarge, "\(archive): \(name) is larger than the \(limit) bytes Ferry reads")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}
