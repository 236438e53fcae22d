import ArgumentParser
import FerryCore
import FerryRecords
import FerryTransfer
import Foundation

/// `ferry diff`: compare two sources record by record.
struct Diff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare the records of two sources or targets (bundles, local stores, Core Data stores).",
        discussion: """
            Records are matched by zone and record name and compared by the digest of their canonical CloudKit JSON \
            without system fields (change tags and times differ between backends). Each record's assets must be \
            available in its source. Exit status: 0 when identical, 1 when anything differs. A Core Data store is \
            compared through its mapping (--preset / --mapping).

            Examples:
              ferry diff app.ferry restored.ferry
              ferry diff Store.sqlite backup.tar.gz --json
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The first source.")
    var first: String

    @Argument(help: "The second source.")
    var second: String

    @OptionGroup var mappingOptions: MappingOptions
    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup(title: "Plist and keyed-archive caches") var cacheOptions: CacheOptions
    @OptionGroup(title: "Incremental exports") var incrementalOptions: IncrementalOptions

    @Option(help: "Directory for scratch files (default: $TMPDIR).")
    var tempDir: String?

    @Option(help: ArgumentHelp("Print at most this many differences (all with --json).", valueName: "n"))
    var limit = 50

    func run() async throws {
        try CommandRunner.run(global, label: "diff") { console in try diff(console) }
    }

    private func diff(_ console: Console) throws -> Int32 {
        let opener = SourceOpener(
            modelOptions: modelOptions, mappingOptions: mappingOptions, cacheOptions: cacheOptions, incrementalOptions: incrementalOptions,
            tempDir: tempDir)
        let a = try opener.open(first, console: console)
        let b = try opener.open(second, console: console)
        var shown = 0
        let summary = try RecordDiff.compare(a, b, temporaryDirectory: tempDir) { difference in
            let (kind, id, type, detail): (String, RecordID, String, String)
            switch difference {
            case .onlyInFirst(let recordID, let recordType): (kind, id, type, detail) = ("only_in_first", recordID, recordType, "only in \(first)")
            case .onlyInSecond(let recordID, let recordType): (kind, id, type, detail) = ("only_in_second", recordID, recordType, "only in \(second)")
            case .differs(let recordID, let recordType): (kind, id, type, detail) = ("differs", recordID, recordType, "differs")
            case .missingAsset(let recordID, let field, let digest, let inFirst):
                (kind, id, type, detail) = ("missing_asset", recordID, "", "\(field): asset \(digest) missing from \(inFirst ? first : second)")
            }
            console.message(
                "difference",
                ["kind": .string(kind), "record_name": .string(id.recordName), "zone": .string(id.zoneID.description), "record_type": .string(type)])
            shown += 1
            if shown <= limit { console.line("\(detail): \(type.isEmpty ? "" : "\(type) ")\(id.recordName) (\(id.zoneID.zoneName))") }
            if shown == limit + 1 { console.line("… more differences; run with --json to list them all") }
        }
        console.message(
            "summary",
            [
                "identical": .bool(summary.isIdentical), "first_records": .integer(Int64(summary.first)),
                "second_records": .integer(Int64(summary.second)),
                "same": .integer(Int64(summary.identical)), "differing": .integer(Int64(summary.differing)),
                "only_in_first": .integer(Int64(summary.onlyInFirst)), "only_in_second": .integer(Int64(summary.onlyInSecond)),
                "missing_assets": .integer(Int64(summary.missingAssets)),
            ])
        if !console.quiet {
            if summary.isIdentical {
                console.line("identical: \(Formatting.count(summary.identical, "record")) in both, every asset present")
            } else {
                console.line(
                    "different: \(summary.identical) same, \(summary.differing) differing, \(summary.onlyInFirst) only in \(first), "
                        + "\(summary.onlyInSecond) only in \(second), \(summary.missingAssets) missing assets")
            }
        }
        return summary.isIdentical ? ExitCodes.success : ExitCodes.rejected
    }
}
