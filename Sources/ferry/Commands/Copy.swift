import ArgumentParser
import FerryBundle
import FerryCore
import FerryCoreData
import FerryMapping
import FerryRecords
import Foundation

/// `ferry copy`: move a source's data into a target, through a mapping.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a Core Data store into a bundle, mapping its objects to records.",
        discussion: """
            The store's objects become records by a mapping: --preset (type-prefixed by default: names Type.UUID kept \
            from the app's recordName or archived recordID, a zone per root type, children in their parent's zone) or \
            --mapping FILE (a plan written by `ferry plan` and edited). Binary data becomes assets; tombstone rows \
            become deletions. The store is never modified. Records that break CloudKit's rules are rejected (exit 1) \
            and listed in --reject-file; what could not be mapped faithfully is reported as warnings.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The source: a Core Data SQLite store.")
    var source: String

    @Argument(help: "The target: a bundle to write (.tar.gz, .tar.zst or .zip).")
    var target: String

    @OptionGroup var mappingOptions: MappingOptions
    @OptionGroup var modelOptions: ModelOptions

    @Option(help: "Archive format: tar.gz, tar.zst or zip (default: from the target's extension, else tar.gz).")
    var format: ArchiveFormat?

    @Option(help: "Write rejected records, with the reasons, to this JSON Lines file.")
    var rejectFile: String?

    @Option(help: "The bundle's creation time, ISO 8601 or seconds since 1970 (default: $SOURCE_DATE_EPOCH, else the store's modification time).")
    var createdAt: String?

    @Option(help: "Directory for scratch files (default: $TMPDIR).")
    var tempDir: String?

    @Flag(name: [.customShort("n"), .long], help: "Map, check and count everything; write nothing.")
    var dryRun = false

    func validate() throws {
        if format == nil && ArchiveFormat(fileName: target) == nil {
            throw ValidationError("cannot tell the format of \(target); end it with .tar.gz, .tar.zst or .zip, or give --format")
        }
        if let createdAt, CreationTime.parse(createdAt) == nil {
            throw ValidationError("--created-at \(createdAt): expected an ISO 8601 time or seconds since 1970")
        }
    }

    func run() async throws {
        try CommandRunner.run(global, label: "copy") { console in try copy(console) }
    }

    private func copy(_ console: Console) throws -> Int32 {
        let started = Date()
        let store = try CoreDataStore(path: source, model: modelOptions.choice, temporaryDirectory: tempDir)
        for note in store.model.notes { console.warning(note) }
        let plan = try mappingOptions.plan(for: store)
        let assets = try StoreAssets(temporaryDirectory: tempDir)
        let mapper = try StoreRecordMapper(store: store, plan: plan, assets: assets)
        var options = BundleWriter.Options(
            source: .init(kind: "core-data", description: URL(fileURLWithPath: source).lastPathComponent + " (\(plan.preset ?? "mapping"))"))
        options.format = format
        options.temporaryDirectory = tempDir
        options.softwareAgent = "ferry \(Ferry.version)"
        options.dryRun = dryRun
        let writer = try BundleWriter(path: target, options: options, assets: assets)
        let rejects = try RejectLog(path: dryRun ? nil : rejectFile, console: console)
        var tally = PackTally()
        var warnings = 0
        try mapper.run { mapped in
            let change = mapped.change
            let shown = "\(mapped.entity) p\(mapped.primaryKey) → \(change.recordType) \(change.recordName)"
            for problem in mapped.problems {
                warnings += 1
                if warnings <= 20 || console.json { console.warning("\(shown): \(problem)") }
                if warnings == 21, !console.json { console.warning("more warnings; run with --json to see them all") }
            }
            switch try writer.add(change) {
            case .accepted(let found):
                tally.count(change, rejected: false)
                for warning in found {
                    warnings += 1
                    if warnings <= 20 || console.json { console.warning("\(shown): \(warning)") }
                }
            case .rejected(let problems):
                tally.count(change, rejected: true)
                try rejects.reject(store: source, entity: mapped.entity, primaryKey: mapped.primaryKey, change: change, problems: problems)
            }
            console.progress("mapping \(source): \(tally.read) records")
        }
        let creation = try CreationTime.resolve(flag: createdAt, inputs: [source])
        let summary = try writer.finish(createdAt: creation) { progress in
            if case .writing(let done, let total) = progress {
                console.progress("writing \(target): \(Formatting.bytes(done)) of \(Formatting.bytes(total))")
            }
        }
        try rejects.commit()
        BundleReport(output: target, dryRun: dryRun, rejectFile: rejectFile, verb: dryRun ? "would copy" : "copied", started: started)
            .print(summary, tally: tally, rejected: rejects.count, warnings: warnings, console: console)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }
}
