import ArgumentParser
import FerryCore
import FerryJSON
import FerryRecords
import FerryTransfer
import Foundation

/// `ferry diff`: compare two sources record by record.
struct Diff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare the records of two sources or targets (bundles, local stores, databases, Core Data stores).",
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
        try await CommandRunner.run(global, label: "diff") { console in
            let opener = SourceOpener(
                modelOptions: modelOptions, mappingOptions: mappingOptions, cacheOptions: cacheOptions, incrementalOptions: incrementalOptions,
                tempDir: tempDir)
            let a = try await opener.open(first, console: console)
            let b = try await opener.open(second, console: console)
            // Comparing is synchronous, and a source may wait for a backend: on a thread of its own, off the cooperative pool.
            return try await AsyncBridge.handOver { try diff(a, b, console: console) }
        }
    }

    private func diff(_ a: any ChangeSource, _ b: any ChangeSource, console: Console) throws -> Int32 {
        // Names as shown: a URL's password never.
        let (first, second) = (Endpoint.redacted(self.first), Endpoint.redacted(self.second))
        if let presetA = a.mappingPreset, let presetB = b.mappingPreset, presetA != presetB {
            // The store's side can be mapped again as the other side was; a bundle's side is as it was made.
            let wanted = a.kind == "core-data" ? presetB : b.kind == "core-data" ? presetA : nil
            let hint = wanted.map { "; give --preset \($0) to map the store as the other side was" } ?? ""
            console.warning(
                "\(first) was mapped with \(presetA), \(second) with \(presetB): they name and zone the same objects differently, so "
                    + "records show as only on one side\(hint)")
        }
        var shown = 0
        let meter = ProgressMeter(console: console, label: "comparing \(first) and \(second)", unit: "records read", total: nil)
        let summary = try RecordDiff.compare(a, b, temporaryDirectory: tempDir, progress: { meter.update(Int64($0)) }) { difference in
            let (kind, id, type, detail): (String, RecordID, String, String)
            var fieldsJSON: JSONValue?
            switch difference {
            case .onlyInFirst(let recordID, let recordType): (kind, id, type, detail) = ("only_in_first", recordID, recordType, "only in \(first)")
            case .onlyInSecond(let recordID, let recordType): (kind, id, type, detail) = ("only_in_second", recordID, recordType, "only in \(second)")
            case .differs(let recordID, let recordType, let fields):
                let named = fields.map { "\($0.name) \($0.first ?? "(absent)") → \($0.second ?? "(absent)")" }.joined(separator: ", ")
                (kind, id, type, detail) = ("differs", recordID, recordType, named.isEmpty ? "differs" : "differs (\(named))")
                fieldsJSON = .array(
                    fields.map {
                        ["field": .string($0.name), "first": $0.first.map { .string($0) } ?? .null, "second": $0.second.map { .string($0) } ?? .null]
                    })
            case .missingAsset(let recordID, let field, let digest, let inFirst):
                (kind, id, type, detail) = ("missing_asset", recordID, "", "\(field): asset \(digest) missing from \(inFirst ? first : second)")
            }
            var message: JSONObject = [
                "kind": .string(kind), "record_name": .string(id.recordName), "zone": .string(id.zoneID.description), "record_type": .string(type),
            ]
            if let fieldsJSON { message["fields"] = fieldsJSON }
            console.message("difference", message)
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
