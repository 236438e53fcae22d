import ArgumentParser
import FerryBackend
import FerryBundle
import FerryCore
import FerryCoreData
import FerryJSON
import FerryLocalStore
import FerryMapping
import FerryMemory
import FerryPostgres
import FerryRecords
import FerryTransfer
import Foundation
import Synchronization

/// `ferry copy`: move a source's data into a target, through a mapping.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy records from a source into a bundle, a local store or a PostgreSQL database.",
        discussion: """
            Sources: a Core Data store (mapped by --preset or --mapping), a plist or NSKeyedArchiver cache of objects \
            (classes or dictionaries → records; names from recordID, recordName or tempID; cloudStatus 2 → deletions), \
            a bundle (an archive, or an unpacked bag directory), a local store. Targets: a bundle \
            (.tar.gz or .tgz, .tar.zst or .tzst, .zip) or a local store (a .ferry path, created when missing, an \
            existing local store, or local:PATH for any name); any other name is refused, and postgres:// and \
            cloudkit:// are not supported yet. Without TARGET the \
            default local store: $FERRY_LOCAL_STORE, else $XDG_DATA_HOME/ferry/local.ferry, else \
            ~/.local/share/ferry/local.ferry.

            A Core Data store's objects become records by a mapping: --preset (type-prefixed by default: names \
            Type.UUID kept from the app's recordName or archived recordID, a zone per root type, children in their \
            parent's zone) or --mapping FILE (a plan written by `ferry plan` and edited). Sources are never modified.

            Into a local store a copy is idempotent (records equal to the target's are left alone and counted \
            unchanged) and resumable (after Ctrl-C, kill -9 or a crash, run the same command again: it goes on from \
            its last checkpoint). --on-conflict decides when the target holds another version: client-wins (default, \
            the source's version), server-wins, newer:FIELD (the newer TIMESTAMP wins), fail (rejected). Deletions \
            always delete. Rejected records go to --reject-file and make the exit code 1.

            Examples:
              ferry copy Store.sqlite app.ferry             # Core Data → local store
              ferry copy app.ferry backup.tar.zst           # local store → bundle
              ferry copy backup.tar.zst restored.ferry      # bundle → local store
              ferry copy Store.sqlite s.tar.gz --preset scorebook -n   # counts only
              ferry copy Store.sqlite out.tar.gz --mapping mapping.yaml
              ferry copy cache.archive app.ferry --record-type Entity --pending-only
              ferry copy Store.sqlite recent.tar.zst --since 2016-11-22
              ferry copy backup.tar.gz notes.tar.zst --type Note --zone CarZone
              ferry copy Store.sqlite local:app.db          # a local store under any name
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The source: a Core Data SQLite store, a plist or keyed-archive cache, a bundle or a local store.")
    var source: String

    @Argument(
        help: """
            The target: a bundle to write (.tar.gz, .tar.zst, .zip) or a local store (.ferry, or an existing one; \
            default: the default local store).
            """)
    var target: String?

    @OptionGroup(title: "Selection") var selection: SelectionOptions
    @OptionGroup var mappingOptions: MappingOptions
    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup(title: "Plist and keyed-archive caches") var cacheOptions: CacheOptions
    @OptionGroup(title: "Incremental exports") var incrementalOptions: IncrementalOptions

    @Option(help: "Archive format: tar.gz, tar.zst or zip (default: from the target's extension, else tar.gz).")
    var format: ArchiveFormat?

    @Option(
        help: """
            Zstandard compression threads for a .tar.zst bundle, beside the thread that frames the entries. Every \
            count gives the same bytes; each thread costs a few MB of memory.
            """)
    var threads: Int = 2

    @Option(help: ArgumentHelp("When the target holds another version of a record (newer:FIELD: the newer TIMESTAMP wins).", valueName: "policy"))
    var onConflict = ConflictPolicy.clientWins

    @Option(help: "Write rejected records, with the reasons, to this JSON Lines file.")
    var rejectFile: String?

    @Option(
        help: ArgumentHelp(
            "The bundle's creation time, ISO 8601 or seconds since 1970 (default: $SOURCE_DATE_EPOCH, else the source's modification "
                + "time; for a database, when the copy began reading it)."))
    var createdAt: TimeArgument?

    @Option(help: "Directory for scratch files (default: $TMPDIR).")
    var tempDir: String?

    @Option(
        help: ArgumentHelp(
            "Changes per transaction (and checkpoint), up to 16 MiB of records (default: 10 000 into a local store, 7 500 into a database).",
            valueName: "n"))
    var batchSize: Int?

    @Option(
        help: ArgumentHelp(
            "Requests in flight at once into a network backend (zones in parallel, each zone's requests in order).", valueName: "n"))
    var parallel: Int?

    @Option(
        help: ArgumentHelp(
            "How often a request a server throttles, or one whose connection was lost, is tried again (waits doubling from 2 s) "
                + "before the copy stops with exit 75; run it again to resume.", valueName: "n"))
    var retries = 5

    @Flag(help: "Fail at once (exit 75) when another copy is writing a zone this one writes, instead of waiting for it.")
    var noWait = false

    @Flag(name: [.customShort("n"), .long], help: "Map, check and count everything; write nothing.")
    var dryRun = false

    func validate() throws {
        if let target, ArchiveFormat(fileName: target) == nil, format != nil {
            throw ValidationError(
                "--format applies to bundle targets named .tar.gz, .tar.zst or .zip; \(target) is not one (the extension must agree with the format)")
        }
        if let batchSize, batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
        guard threads >= 1 && threads <= 64 else { throw ValidationError("--threads must be between 1 and 64") }
        if let parallel, !(1...64).contains(parallel) { throw ValidationError("--parallel must be between 1 and 64") }
        guard (0...20).contains(retries) else { throw ValidationError("--retries must be between 0 and 20") }
    }

    func run() async throws {
        try await CommandRunner.run(global, label: "copy") { console in try await copy(console) }
    }

    private func copy(_ console: Console) async throws -> Int32 {
        let started = Date()
        let kind = try Endpoint.target(target ?? Endpoint.defaultLocalStore(), isDefault: target == nil)
        let files = try claimFiles(target: kind)
        let changes = try await openSource(console)
        let code = try await copy(changes, into: kind, files: files, console: console, started: started)
        if let position = changes.feedPosition, code == ExitCodes.success || code == ExitCodes.rejected {
            // What the next incremental copy passes to --since: where this read of the feed ended.
            console.message("position", ["since": .string(position.description)])
            if !console.quiet { console.line("to copy only what changes after this: --since \(position)") }
        }
        return code
    }

    private func copy(_ changes: any ChangeSource, into kind: Endpoint.Target, files: RunFiles, console: Console, started: Date)
        async throws -> Int32
    {
        let targetPath = kind.path
        if let parallel, parallel > 1, !kind.isPostgres {
            // Said, not silently dropped: neither a bundle nor a local store takes requests.
            console.warning(
                "--parallel \(parallel) applies to network backends; \(targetPath) is a \(kindName(kind)), written in one stream, so it "
                    + "has no effect here")
        }
        switch kind {
        case .bundle:
            let copy = CopyToBundle(
                source: changes, sourcePath: Endpoint.redacted(source), target: targetPath, format: format, rejectFile: rejectFile,
                createdAt: createdAt, databaseReadAt: Endpoint.isPostgresURL(source) ? started : nil,
                tempDir: tempDir, zstdWorkers: threads, dryRun: dryRun, files: files)
            // Synchronous, and its source may wait for a backend: on a thread of its own, off the cooperative pool.
            return try await AsyncBridge.handOver { try copy.run(console: console, started: started) }
        case .postgres(let url):
            // Large buffers (a round's rows, the connection's) mapped on their own, so what a round frees goes back to the
            // system rather than stay in the allocator's heaps (peak RSS: Docs/design-notes.md).
            ProcessMemory.mapBlocks(ofAtLeast: 1 << 20)
            var options = RecordCopier.Options()
            // Rounds of 7 500 with half the usual read-ahead: fewer transactions than 5 000 and within 200 MB, which
            // 10 000 is not (measured in Docs/design-notes.md).
            options.batchSize = batchSize ?? 7_500
            (changes as? PipelinedChangeSource)?.depth = 12
            options.policy = onConflict
            options.dryRun = dryRun
            options.temporaryDirectory = tempDir
            options.parallel = parallel ?? 4
            options.retries = retries
            options.waitForZones = !noWait
            options.onWaiting = { message in console.warning(message) }
            let copy = CopyToBackend(
                source: changes, sourcePath: Endpoint.redacted(source), target: targetPath, options: options, rejectFile: rejectFile, files: files)
            func run(into target: any RecordStore & CheckpointJournal, described: String) async throws -> Int32 {
                try await CommittedCount.noted(target: targetPath, kept: false, dryRun: dryRun) { committed in
                    try await copy.run(into: target, journal: target, described: described, committed: committed, console: console, started: started)
                }
            }
            let store: PostgresRecordStore
            do {
                store = try await PostgresOpener.open(url, console: console, migrate: !dryRun, retries: retries)
            } catch let error as PostgresBackendError where dryRun && error.code == .noData {
                // A dry run creates nothing: a schema that does not exist yet is counted as the empty one a copy would
                // create, through the contract's in-memory store standing in for it.
                console.note("\(targetPath): the schema holds no Ferry data yet; the dry run counts what a copy into it, empty, would do")
                let empty = InMemoryRecordStore(name: targetPath, maxOperationsPerRequest: 1000, maxRequestBytes: 16 << 20)
                return try await run(into: empty, described: "a PostgreSQL database (a schema not created yet)")
            }
            let code: Int32
            do {
                // The same database and schema under another name (a host alias, a default made explicit): the copy
                // would read what it writes.
                if let identity = changes.feedPosition?.source, try await store.feedIdentity() == identity {
                    throw TransferError(
                        .unsupported,
                        "\(Endpoint.redacted(source)) and \(targetPath) are the same store (store_id \(identity)): copying it into itself changes "
                            + "nothing; copy into another schema or database")
                }
                code = try await run(into: store, described: "a PostgreSQL database (schema \(store.database.settings.schema))")
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
            return code
        case .localStore:
            var options = RecordCopier.Options()
            options.batchSize = batchSize ?? 10_000
            options.policy = onConflict
            options.parallel = parallel ?? 1
            options.dryRun = dryRun
            options.temporaryDirectory = tempDir
            return try await CopyToLocalStore(
                copy: CopyToBackend(
                    source: changes, sourcePath: Endpoint.redacted(source), target: targetPath, options: options, rejectFile: rejectFile,
                    files: files)
            ).run(console: console, started: started)
        }
    }

    private func kindName(_ kind: Endpoint.Target) -> String {
        switch kind {
        case .bundle: "bundle"
        case .localStore: "local store (copied through its bulk path)"
        case .postgres: "PostgreSQL database"
        }
    }

    /// The files the copy reads, with its outputs claimed: refused before anything is read or written when an output
    /// would replace an input (`--reject-file` naming the source, say) or the target is the source.
    private func claimFiles(target kind: Endpoint.Target) throws -> RunFiles {
        let files = RunFiles()
        // A SQLite store's rows may be in its write-ahead log.
        let sourcePath = Endpoint.filePath(source)
        for suffix in ["", "-wal", "-shm", "-journal"] { files.add(sourcePath + suffix, as: "the source \(sourcePath + suffix)") }
        if let mapping = mappingOptions.mapping { files.add(mapping, as: "the mapping \(mapping)") }
        if let model = modelOptions.model { files.add(model, as: "the model \(model)") }
        switch kind {
        case .bundle, .postgres:
            break  // a bundle is claimed by its writer; a database is no file
        case .localStore(let target):
            // Changed in place, never renamed over: the reject file may not replace it.
            if let identity = FileIdentity(path: target), identity == FileIdentity(path: source) {
                throw TransferError(.unsupported, "\(source) is both the source and the target")
            }
            try AtomicOutputFile.checkDestination(target, as: "the target local store", makesDirectory: true)
            for suffix in ["", "-wal", "-shm"] { files.add(target + suffix, as: "the target local store \(target + suffix)") }
        }
        if let rejectFile { try files.claim(output: rejectFile, as: "the reject file") }
        return files
    }

    private func openSource(_ console: Console) async throws -> any ChangeSource {
        try await SourceOpener(
            modelOptions: modelOptions, mappingOptions: mappingOptions, cacheOptions: cacheOptions, incrementalOptions: incrementalOptions,
            selection: selection, tempDir: tempDir
        ).open(
            source, console: console)
    }
}
