import FerryCore
import FerryDirectIO
import FerryMemory
import FerryRecords
import FerrySorting
import Foundation

/// Writes a bundle: admits records one by one (validating them), then packs them with their assets into a
/// deterministic BagIt archive under a temporary name, renamed into place when complete.
///
/// ```swift
/// let writer = try BundleWriter(path: "backup.tar.gz", options: .init(source: .init(kind: "ndjson", description: "…")),
///                               assets: provider)
/// for change in changes {
///     if case .rejected(let problems) = try writer.add(change) { report(problems) }
/// }
/// let summary = try writer.finish(createdAt: snapshotTime, found: { report($0.problem) })
/// ```
///
/// Memory stays bounded whatever the number of records: records are spooled to scratch files, and what finishing
/// needs of each (its identity and references, for duplicates and dependency order) goes to sorted runs on disk (a
/// ``RecordLedger``). Because of that, a record name used twice in a zone and a target with too many DELETE_SELF
/// references are found by ``finish(createdAt:progress:found:)``, which hands them to its `found` callback; every
/// other problem is reported by `add`.
public final class BundleWriter {
    /// How a bundle is written.
    public struct Options: Sendable {
        /// Archive container and compression; by default from the file name, else tar.gz.
        public var format: ArchiveFormat?
        /// The source description stored in the manifest.
        public var source: BundleManifest.Source
        /// Where scratch files go (default `$TMPDIR`).
        public var temporaryDirectory: String?
        /// The record rules.
        public var validator = RecordValidator()
        /// Bytes of record identities and references kept in memory before they are sorted into a scratch file (40
        /// bytes each), the copy their sort scatters them into included (``RecordLedger``).
        public var admissionMemoryLimit = 4 << 20
        /// Zstandard worker threads of a .tar.zst bundle, compressing beside the thread that writes the archive (at
        /// least 1; default 2).
        ///
        /// The bytes do not depend on the count (Zstandard's multi-threaded output does not), so bundles stay
        /// reproducible across machines. Each worker costs a few MB of buffers (1 MiB jobs, ``ZstdCompressor``).
        public var zstdWorkers = 2
        /// The program name written into the bag.
        public var softwareAgent = "ferry"
        /// Bytes of record lines buffered before they go to the spool's log (``RecordSpool``).
        package var spoolMemoryLimit = 4 << 20
        /// Record files (type and zone) filled at once before the least recently used half is set aside.
        package var spoolActiveFiles = 4096
        /// Record files listed in memory before the list goes to a scratch file (``RecordFileList``).
        package var fileListMemoryLimit = 4096
        /// When the content was taken, if it is known before the records are added.
        ///
        /// It is every entry's modification time, which a .tar.zst bundle needs early to write its larger assets while
        /// records are still being added (``EarlyAssetWriter``). ``finish(createdAt:progress:found:)`` must be given
        /// the same time.
        public var createdAt: Date?
        /// Whether a .tar.zst bundle with ``createdAt`` writes its larger assets while records are added (the bytes
        /// differ: those assets come first, in the order records used them).
        package var writesAssetsEarly = true
        /// Whether the head of a bundle whose assets were written early goes before them in place where the
        /// filesystem can (else, or when `false`, the file is written again behind it).
        package var prependsInPlace = true
        /// Admit and count everything, but write no bundle (scratch files are written and removed as in a real run).
        public var dryRun = false
        /// The run's inputs and outputs, which the bundle may not replace (checked when the writer is made, and
        /// again before the rename); `nil` to check nothing.
        public var files: RunFiles?

        /// Creates options.
        public init(source: BundleManifest.Source) {
            self.source = source
        }
    }

    /// Whether a change was taken into the bundle.
    public enum Admission: Sendable, Hashable {
        /// Written; the warnings (if any) are worth reporting.
        case accepted(warnings: [RecordProblem])
        /// Not written, for these reasons.
        case rejected([RecordProblem])
    }

    /// What progress to report.
    public enum Progress: Sendable {
        /// Bytes of the archive's payload written so far, of the total.
        case writing(done: Int64, total: Int64)
    }

    /// The path being written.
    public let path: String
    /// How the bundle is written.
    let options: Options
    private let format: ArchiveFormat
    private let assets: (any AssetProvider)?
    /// The records admitted so far, in scratch files by type and zone.
    let spool: RecordSpool
    private let ledger: RecordLedger
    /// The record types and fields of the records admitted so far (see ``absorb(_:newLayout:)``); the zones are the
    /// spool's.
    var schema = RecordSchema(tracksZones: false) {
        // Derived from the schema, so forgotten with any change to it (a layout is only ever added, but when
        // duplicates are taken out the schema is built again).
        didSet { recentLayouts.removeAll() }
    }
    /// The assets the records admitted so far use, with their sizes (see ``absorb(_:newLayout:)``).
    let assetCatalog: AssetCatalog
    private var types = RecordTypeIndex()
    /// Layouts the schema knows, the latest first (see ``knowsLayout(_:)``).
    private var recentLayouts: [RecordSchema.Layout] = []
    private var lastSequence: Int64 = 0
    private var finished = false
    /// The bundle's directory in its archive.
    private let base: String
    /// Where the bundle is written: opened at the start when assets are written early, else when finishing.
    private var output: AtomicOutputFile?
    /// Writes the larger assets while records are added (a .tar.zst bundle with ``Options/createdAt``).
    private let earlyAssets: EarlyAssetWriter?

    /// Starts a bundle at `path`; nothing appears there until ``finish(createdAt:progress:found:)`` succeeds.
    /// - Parameters:
    ///   - path: the bundle file; its extension chooses the format unless `options.format` is set.
    ///   - options: format, time, source and limits.
    ///   - assets: where asset bytes come from; without it, records with assets are rejected.
    public init(path: String, options: Options, assets: (any AssetProvider)?) throws {
        // Refused now rather than after reading everything: a path that names an input (in dry runs too).
        try options.files?.claim(output: path, as: Self.role)
        self.path = path
        self.options = options
        format = options.format ?? ArchiveFormat(fileName: path) ?? .tarGzip
        self.assets = assets
        spool = try RecordSpool(
            parent: options.temporaryDirectory, memoryLimit: options.spoolMemoryLimit, maxActiveFiles: options.spoolActiveFiles)
        ledger = RecordLedger(
            memoryLimit: options.admissionMemoryLimit, deleteSelfLimit: options.validator.limits.maxDeleteSelfReferencesPerTarget,
            temporaryDirectory: options.temporaryDirectory)
        assetCatalog = AssetCatalog(memoryLimit: options.admissionMemoryLimit / 2, temporaryDirectory: options.temporaryDirectory)
        base = ArchiveFormat.baseName(of: URL(fileURLWithPath: path).lastPathComponent)
        if !options.dryRun, format == .tarZstd, options.writesAssetsEarly, let assets, let createdAt = options.createdAt {
            let output = try AtomicOutputFile(path: path, files: options.files, as: Self.role, writesInBackground: true, direct: true)
            self.output = output
            // Where the filesystem cannot shift blocks (tmpfs, btrfs, network filesystems), the assets are only noted,
            // and written after the head: the same bundle, without a scratch copy of them.
            let inPlace = try options.prependsInPlace && output.canPrependInPlace()
            let mtime = Self.entryTime(createdAt)
            earlyAssets =
                inPlace
                ? try EarlyAssetWriter(
                    output: output.file, provider: assets, base: base, mtime: mtime, temporaryDirectory: options.temporaryDirectory)
                : try EarlyAssetWriter(deferringWith: assets, base: base, mtime: mtime, temporaryDirectory: options.temporaryDirectory)
        } else {
            earlyAssets = nil
        }
    }

    deinit {
        // The queue writing assets stops before the output it writes into is removed.
        if !finished { discardOutput() }
    }

    /// Every entry's modification time: `createdAt` in whole seconds.
    private static func entryTime(_ createdAt: Date) -> Int64 { Int64(createdAt.timeIntervalSince1970.rounded(.down)) }

    /// What the output is called in errors.
    private static let role = "the bundle"

    /// What prepares changes for this writer, on any thread.
    public var preparer: ChangePreparer { ChangePreparer(validator: options.validator) }

    /// Validates a record or deletion and, if it passes, adds it.
    /// - Parameter origin: where the change came from, as a number that grows from call to call (a line number, say);
    ///   ``finish(createdAt:progress:found:)`` names the changes it rejects or warns about by it. Default: the change's
    ///   1-based number among the changes added.
    /// - Returns: whether it was accepted, with the problems found.
    /// - Throws: only I/O errors on the scratch files; invalid records are returned as ``Admission/rejected(_:)``.
    @discardableResult
    public func add(_ change: RecordChange, origin: Int64? = nil) throws -> Admission {
        try add(preparer.prepare(change), origin: origin)
    }

    /// Adds a prepared change after the checks that depend on the changes added before: a field that changes type,
    /// an asset that is missing or has another size. (A name used twice in a zone is found when finishing.)
    /// - Parameter origin: as for ``add(_:origin:)-(RecordChange,_)``.
    /// - Returns: whether it was accepted, with all problems found.
    /// - Throws: only I/O errors on the scratch files.
    @discardableResult
    public func add(_ prepared: PreparedChange, origin: Int64? = nil) throws -> Admission {
        let sequence = nextSequence(origin)
        var problems = prepared.problems
        let newLayout = recordOfNewLayout(prepared)
        if let newLayout { problems += schema.conflicts(in: newLayout, layout: prepared.layout) }
        if !prepared.isDeletion { problems += try assetProblems(prepared.assets) }
        if problems.contains(where: { $0.severity == .error }) { return .rejected(problems) }
        try absorb(prepared, newLayout: newLayout)
        try prepared.canonicalJSON.withUnsafeBytes { line in
            try prepared.references.withUnsafeBufferPointer { references in
                try note(
                    line, isDeletion: prepared.isDeletion, recordType: prepared.recordType, zoneID: prepared.zoneID, key: prepared.key,
                    references: references, sequence: sequence)
            }
        }
        return .accepted(warnings: problems)
    }

    /// Adds line `index` of a batch prepared through shapes (``LinePreparer/prepare(_:into:)``).
    ///
    /// Such a line is a valid record without assets, so once its layout is known nothing can reject it or warn about
    /// it here: only the scratch files take it. The first line of a layout goes the way of a ``PreparedChange``.
    /// - Parameter origin: as for ``add(_:origin:)-(RecordChange,_)``.
    /// - Returns: whether it was accepted, with all problems found.
    /// - Throws: only I/O errors on the scratch files.
    @discardableResult
    package func add(_ lines: borrowing PreparedLines, at index: Int, origin: Int64? = nil) throws -> Admission {
        let entry = lines.entries[index]
        guard knowsLayout(entry.layout) else { return try add(lines.change(at: index), origin: origin) }
        let sequence = nextSequence(origin)
        try lines.withLine(entry) { line, recordType, zoneID, references in
            try note(line, isDeletion: false, recordType: recordType, zoneID: zoneID, key: entry.key, references: references, sequence: sequence)
        }
        return .accepted(warnings: [])
    }

    /// The sequence number of the next change: its origin, or one past the last.
    private func nextSequence(_ origin: Int64?) -> Int64 {
        precondition(!finished, "BundleWriter.add after finish")
        lastSequence = max(origin ?? 0, lastSequence + 1)
        return lastSequence
    }

    /// Takes an admitted change's canonical line into the spool, and its identity and references into the ledger.
    ///
    /// The spool's file is named by the change's own strings: a key made for every line retained and released them.
    private func note(
        _ line: UnsafeRawBufferPointer, isDeletion: Bool, recordType: String, zoneID: ZoneID, key: RecordKey,
        references: UnsafeBufferPointer<(target: RecordKey, deleteSelf: Bool)>, sequence: Int64
    ) throws {
        let location =
            isDeletion
            ? try spool.append(line, kind: .deletions, recordType: nil, zoneID: zoneID)
            : try spool.append(line, kind: .records, recordType: recordType, zoneID: zoneID)
        let type = types.index(of: recordType)
        try ledger.noteIdentity(key, type: type, sequence: sequence, at: location)
        for reference in references {
            try ledger.noteReference(to: reference.target, from: type, deleteSelf: reference.deleteSelf, sequence: sequence, at: location)
        }
    }

    /// Whether the schema has seen a layout, asked of the latest layouts first: a few alternate, and hashing one
    /// into the schema's set for every line was a twentieth of admitting it.
    private func knowsLayout(_ layout: RecordSchema.Layout) -> Bool {
        if recentLayouts.contains(layout) { return true }
        guard schema.knows(layout) else { return false }
        if recentLayouts.count == 8 { recentLayouts.removeLast() }
        recentLayouts.insert(layout, at: 0)
        return true
    }

    /// The record of a change whose layout the schema has not seen yet (the first record of each, mostly: only those
    /// need the record itself, decoded from the canonical JSON when the change was prepared from a line); `nil` for a
    /// deletion or a known layout.
    func recordOfNewLayout(_ prepared: PreparedChange) -> Record? {
        guard !prepared.isDeletion, prepared.layout.map(schema.knows) != true, case .record(let record) = prepared.change else { return nil }
        return record
    }

    /// Takes an admitted change's record type, fields and assets into the schema and the asset list.
    /// - Parameter newLayout: the record, if its layout is not in the schema yet.
    /// - Throws: ``CoreError`` when the asset list's scratch file cannot be written.
    func absorb(_ prepared: PreparedChange, newLayout: Record?) throws {
        if prepared.isDeletion {
            schema.addDeletion(recordType: prepared.recordType, zoneID: prepared.zoneID)
            return
        }
        if let newLayout { schema.add(newLayout, layout: prepared.layout) }
        for (_, asset) in prepared.assets where try assetCatalog.add(asset) { try earlyAssets?.offer(asset) }
    }

    /// Writes the archive and renames it into place (or, for a dry run, only works out what it would hold).
    /// - Parameters:
    ///   - createdAt: when the content was taken: `manifest.json`'s `createdAt` and every entry's mtime (whole
    ///     seconds). Give a time derived from the input, not the clock, to keep bundles reproducible.
    ///   - progress: called as payload bytes are written.
    ///   - found: called with each problem found only now (each change rejected as a later occurrence of a name, each
    ///     DELETE_SELF warning), before the archive is written; the summary counts them.
    /// - Returns: what was (or would be) written.
    /// - Throws: ``BundleError`` on I/O failure or when an asset changed during the run, or what `found` throws;
    ///   nothing is left behind.
    @discardableResult
    public func finish(
        createdAt: Date, progress: ((Progress) -> Void)? = nil, found: ((DeferredProblem) throws -> Void)? = nil
    ) throws -> BundleSummary {
        precondition(!finished, "BundleWriter.finish called twice")
        precondition(
            earlyAssets == nil || options.createdAt.map(Self.entryTime) == Self.entryTime(createdAt),
            "BundleWriter.finish given another time than Options.createdAt")
        finished = true
        defer { spool.remove() }
        let createdAt = Date(timeIntervalSince1970: createdAt.timeIntervalSince1970.rounded(.down))
        let early: ExternalSortedSet<AssetEntry>?
        do {
            early = try earlyAssets?.finish()
        } catch {
            discardOutput()
            throw error
        }
        // The spool's last lines go to its queue, which hashes and compresses them while the ledger is resolved here.
        try spool.flush()
        let resolution = try ledger.resolve()
        try spool.finish()
        ledger.reset()
        // Warnings first: they point at lines of the spool as it was written, before duplicates are taken out.
        let warnings = try overflowWarnings(resolution.overflows)
        for warning in warnings { try found?(warning) }
        var ordering = RecordTypeGraph.ordering(
            of: types.names, edges: resolution.edges, danglingReferences: resolution.danglingReferences)
        let records = try planRecords(order: ordering.order, duplicates: resolution.duplicates) { try found?($0) }
        if !resolution.duplicates.isEmpty {
            let present = try absorbAgain(records)
            ordering.order.removeAll { !present.contains($0) }
            ordering.cycles = ordering.cycles.map { $0.filter(present.contains) }.filter { $0.count > 1 }
        }
        let plan = try makePlan(createdAt: createdAt, records: records, ordering: ordering)
        let summary = BundleSummary(
            path: path, format: format, manifest: plan.manifest, payloadBytes: plan.payloadBytes,
            danglingReferences: plan.danglingReferences, dryRun: options.dryRun,
            rejectedAtFinish: resolution.duplicates.count, warningsAtFinish: warnings.count)
        if options.dryRun { return summary }
        // What admission needed is gone; hand the memory back before compression threads allocate theirs.
        ProcessMemory.returnFreedMemory()
        // Written beside the thread that feeds the compressor, and around the page cache: copying into it was the
        // slowest step of the write.
        var output = try self.output ?? AtomicOutputFile(path: path, files: options.files, as: Self.role, writesInBackground: true, direct: true)
        do {
            if let early, early.count > 0, try early.makeCursor(notIn: plan.assets).next() == nil {
                try write(plan, to: output, after: early, progress: progress)
            } else {
                if let early, early.count > 0 {
                    // Duplicates took out the only records of an asset written already: written again without it.
                    output.discard()
                    output = try AtomicOutputFile(path: path, files: options.files, as: Self.role, writesInBackground: true, direct: true)
                }
                try write(plan, to: output.file, progress: progress)
            }
            self.output = nil
            try spool.remove(whileRunning: output.commit)
        } catch {
            output.discard()
            self.output = nil
            throw error
        }
        return summary
    }

    /// Stops writing assets early and removes the output.
    private func discardOutput() {
        earlyAssets?.abandon()
        output?.discard()
        output = nil
    }

    /// Everything known about the bundle before its archive is written.
    private struct Plan {
        var manifest: BundleManifest
        var manifestFile: GeneratedFile
        var schemaFile: GeneratedFile
        var records: SpoolPlan
        /// Sorted by digest.
        var assets: ExternalSortedSet<AssetEntry>
        var bagInfoBytes: [UInt8]
        var payloadManifest: GeneratedFile
        var tagManifest: [UInt8]
        var payloadBytes: Int64
        var danglingReferences: Int
    }

    private func makePlan(createdAt: Date, records: SpoolPlan, ordering: RecordTypeGraph.Ordering) throws -> Plan {
        let (assets, assetBytes) = try assetCatalog.finish()
        let manifest = BundleManifest(
            createdAt: createdAt, createdBy: options.softwareAgent, source: options.source,
            recordTypeOrder: ordering.order, dependencyCycles: ordering.cycles, files: records.files,
            assetCount: assets.count, assetBytes: assetBytes)
        let manifestFile = try GeneratedFile.manifest(manifest)
        let schemaFile = try GeneratedFile { [schema] emit in try schema.writePretty(zones: records.zones.forEach, emit) }

        // Every payload file but the assets and the record files, for the payload manifest (made line by line
        // whenever it is needed).
        let metadata = [(BundleLayout.manifestFile, manifestFile.digest), (BundleLayout.schemaFile, schemaFile.digest)]
        let payloadManifest = try GeneratedFile.payloadManifest(assets: assets, metadata: metadata, records: records)
        let payloadBytes = manifestFile.size + schemaFile.size + records.bytes + manifest.assetBytes
        let bagInfo = BagInfo(
            payloadBytes: payloadBytes, payloadFiles: metadata.count + records.files.count + assets.count,
            baggingDate: String(BundleManifest.timestampText(createdAt).prefix(10)),
            softwareAgent: options.softwareAgent,
            description: "Ferry bundle: \(manifest.recordCount) records, \(manifest.deletionCount) deletions, \(assets.count) assets")
        let bagInfoBytes = bagInfo.bytes
        let tagManifest = BagIt.manifest([
            (BundleLayout.bagitFile, SHA256Hasher.digest(BagIt.declaration)),
            (BundleLayout.bagInfoFile, SHA256Hasher.digest(bagInfoBytes)),
            (BundleLayout.payloadManifestFile, payloadManifest.digest),
        ])
        return Plan(
            manifest: manifest, manifestFile: manifestFile, schemaFile: schemaFile, records: records, assets: assets,
            bagInfoBytes: bagInfoBytes, payloadManifest: payloadManifest, tagManifest: tagManifest,
            payloadBytes: payloadBytes, danglingReferences: ordering.danglingReferences)
    }

    /// Writes a generated file as one entry, piece by piece.
    private func write(_ file: GeneratedFile, at path: String, to archive: ArchiveWriter) throws {
        try archive.beginFile(path, size: file.size)
        var written: Int64 = 0
        try file.forEachPiece { piece in
            written += Int64(piece.count)
            try piece.withUnsafeBytes { try archive.write($0) }
        }
        // Made the same way twice, so the same bytes; checked all the same, as the header already holds the size.
        guard written == file.size else { throw BundleError(.writeFailed, "\(path): made \(written) bytes, \(file.size) the first time") }
    }

    /// Writes the archive: tag files and metadata first (so readers learn everything from the front), then the
    /// record files in dependency order, the deletions, and the assets in digest order (the order of a bundle whose
    /// assets were not written early).
    private func write(_ plan: Plan, to file: OutputFile, progress: ((Progress) -> Void)?) throws {
        let archive = try ArchiveWriter(
            file: file, format: format, mtime: Int64(plan.manifest.createdAt.timeIntervalSince1970), zstdWorkers: options.zstdWorkers)
        let copier = try writeHead(plan, to: archive, progress: progress)
        try AssetCopier(provider: assets, copier: copier, base: base, workers: options.zstdWorkers).copy(plan.assets)
        try archive.close()
    }

    /// Writes a .tar.zst archive after assets written early (``EarlyAssetWriter``): its head (as
    /// ``write(_:to:progress:)`` writes it) goes before those assets, padded with a skippable frame to a whole number
    /// of ``OutputFile/prependUnit`` (``AtomicOutputFile/prepend(atMost:inPlace:_:)`` when they are in the output
    /// already, else written first and the assets after it); the other assets and the archive's end follow them.
    private func write(_ plan: Plan, to output: AtomicOutputFile, after early: ExternalSortedSet<AssetEntry>, progress: ((Progress) -> Void)?)
        throws
    {
        var archive: ArchiveWriter?
        var copier: EntryCopier?
        func writeHead(into head: OutputFile) throws {
            let writer = try ArchiveWriter(
                file: head, format: format, mtime: Int64(plan.manifest.createdAt.timeIntervalSince1970), zstdWorkers: options.zstdWorkers)
            copier = try self.writeHead(plan, to: writer, progress: progress)
            try writer.endSegment()
            try head.write(ZstdSkippableFrame.padding(after: head.position, to: OutputFile.prependUnit))
            archive = writer
        }
        if let earlyAssets, earlyAssets.writesAfterHead {
            // The output is empty: the head, then the assets, in the order they were taken.
            try writeHead(into: output.file)
            try earlyAssets.writeDeferred(into: output.file)
        } else {
            try output.prepend(atMost: Self.headBound(plan), inPlace: options.prependsInPlace, writeHead)
        }
        guard let archive, let copier else { throw BundleError(.writeFailed, "the bundle's head was not written") }
        try archive.redirect(to: output.file)
        copier.advance(by: earlyAssets?.bytes ?? 0)
        try AssetCopier(provider: assets, copier: copier, base: base, workers: options.zstdWorkers).copy(plan.assets, except: early)
        try archive.close()
    }

    /// The most bytes the head of a .tar.zst bundle (its archive up to the assets, padding included) can take:
    /// Zstandard's bound on its tar bytes, with room for every entry's header and every frame's overhead.
    private static func headBound(_ plan: Plan) -> Int64 {
        let entries = Int64(6 + plan.records.files.count)
        let content =
            Int64(BagIt.declaration.count + plan.bagInfoBytes.count + plan.tagManifest.count) + plan.payloadManifest.size
            + plan.manifestFile.size + plan.schemaFile.size + plan.records.bytes
        let tar = content + entries * 2048
        // Runs are frames of at least 64 KiB, each within Zstandard's bound; the rest is framed at least that often.
        let frames = tar / (64 << 10) + entries + 2
        return tar + tar / 128 + frames * 256 + (1 << 20)
    }

    /// Writes the tag files, the metadata and the record files.
    /// - Returns: the copier for the assets that follow.
    private func writeHead(_ plan: Plan, to archive: ArchiveWriter, progress: ((Progress) -> Void)?) throws -> EntryCopier {
        try archive.file("\(base)/\(BundleLayout.bagitFile)", contents: BagIt.declaration)
        try archive.file("\(base)/\(BundleLayout.bagInfoFile)", contents: plan.bagInfoBytes)
        try write(plan.payloadManifest, at: "\(base)/\(BundleLayout.payloadManifestFile)", to: archive)
        try archive.file("\(base)/\(BundleLayout.tagManifestFile)", contents: plan.tagManifest)
        try write(plan.manifestFile, at: "\(base)/\(BundleLayout.manifestFile)", to: archive)
        try write(plan.schemaFile, at: "\(base)/\(BundleLayout.schemaFile)", to: archive)
        let copier = EntryCopier(archive: archive, total: plan.payloadBytes, progress: progress)
        copier.done = plan.manifestFile.size + plan.schemaFile.size
        try plan.records.forEachFile { path, size, runs in try copier.copy(to: "\(base)/\(path)", size: size, runs: runs) }
        return copier
    }

    /// Abandons the bundle: removes scratch files; nothing is written.
    public func discard() {
        finished = true
        discardOutput()
        spool.remove()
        ledger.reset()
        assetCatalog.reset()
    }

    private func assetProblems(_ assets: [(field: String, asset: Asset)]) throws -> [RecordProblem] {
        var problems: [RecordProblem] = []
        for (field, asset) in assets {
            if let known = assetCatalog.recentSize(of: asset.sha256) {
                if known != asset.size {
                    problems.append(
                        RecordProblem(
                            .error, .asset, at: "fields.\(field)",
                            "asset \(asset.sha256) is \(asset.size) bytes here but \(known) bytes in an earlier record"))
                }
            } else if try !(self.assets?.canProvide(asset) ?? false) {
                problems.append(
                    RecordProblem(
                        .error, .asset, at: "fields.\(field)",
                        "the bytes of asset \(asset.sha256) (\(asset.size) bytes) are not available; give the file with --assets"))
            }
        }
        return problems
    }
}
