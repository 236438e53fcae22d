import ArgumentParser
import FerryBundle
import FerryCore
import FerryRecords
import Foundation

/// `ferry pack`: build a bundle from NDJSON files of CloudKit record dictionaries.
struct Pack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build a bundle from NDJSON files of records in CloudKit's JSON form.",
        discussion: """
            Each input line is a CloudKit record dictionary ({"recordName", "recordType", "zoneID", "fields"}); \
            a line with "deleted": true is a deletion. An ASSET field's value {"path": "photos/1.jpg"} names a file \
            under --assets. Records that break CloudKit's rules are rejected (exit 1) and listed in --reject-file.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "NDJSON files of records ('-' for standard input).")
    var records: [String]

    @Option(name: [.short, .long], help: "The bundle to write: .tar.gz, .tar.zst or .zip.")
    var output: String

    @Option(help: "The directory that ASSET paths are relative to.")
    var assets: String?

    @Option(help: "Archive format: tar.gz, tar.zst or zip (default: from --output's extension, else tar.gz).")
    var format: ArchiveFormat?

    @Option(help: "Write rejected records, with the reasons, to this JSON Lines file.")
    var rejectFile: String?

    @Option(
        help: """
            The bundle's creation time, ISO 8601 or seconds since 1970 (default: $SOURCE_DATE_EPOCH, else the newest \
            modification time of the inputs), so packing the same files twice gives identical bundles.
            """)
    var createdAt: String?

    @Option(help: "Directory for scratch files (default: $TMPDIR).")
    var tempDir: String?

    @Option(help: "Zstandard compression threads for .tar.zst (default: 1).")
    var threads: Int = 1

    @Flag(name: [.customShort("n"), .long], help: "Check and count everything; write nothing.")
    var dryRun = false

    func validate() throws {
        guard !records.isEmpty else { throw ValidationError("give at least one NDJSON file of records") }
        guard threads >= 1 && threads <= 64 else { throw ValidationError("--threads must be between 1 and 64") }
        if format == nil && ArchiveFormat(fileName: output) == nil {
            throw ValidationError("cannot tell the format of \(output); end it with .tar.gz, .tar.zst or .zip, or give --format")
        }
        if let createdAt, CreationTime.parse(createdAt) == nil {
            throw ValidationError("--created-at \(createdAt): expected an ISO 8601 time or seconds since 1970")
        }
    }

    func run() async throws {
        try CommandRunner.run(global, label: "pack") { console in try pack(console) }
    }

    private func pack(_ console: Console) throws -> Int32 {
        let started = Date()
        let inputs = records.map { $0 == "-" ? "/dev/stdin" : $0 }
        let provider = try assets.map { try DirectoryAssetProvider(root: $0) }
        var decoder = CloudKitJSONDecoder()
        if let provider {
            decoder.assetResolver = { path, fileName in try provider.resolve(path: path, fileName: fileName) }
        }
        var options = BundleWriter.Options(
            source: .init(kind: "ndjson", description: records.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ")))
        options.format = format
        options.temporaryDirectory = tempDir
        options.softwareAgent = "ferry \(Ferry.version)"
        options.zstdThreads = threads > 1 ? threads : 0
        options.dryRun = dryRun
        let writer = try BundleWriter(path: output, options: options, assets: provider)
        let rejects = try RejectLog(path: dryRun ? nil : rejectFile, console: console)
        var tally = PackTally()
        var warnings = 0
        let preparer = writer.preparer
        for input in inputs {
            let reader = NDJSONRecordReader(path: input, decoder: decoder)
            // Decoding, validation and encoding run on all cores; admission runs here, in input order.
            try reader.forEach(workers: OrderedParallelMap.defaultWorkers, transform: { PackItem($0, preparer) }) { item in
                switch item {
                case .prepared(let prepared, let position):
                    let change = prepared.change
                    switch try writer.add(prepared) {
                    case .accepted(let found):
                        tally.count(change, rejected: false)
                        for warning in found {
                            warnings += 1
                            console.warning("\(input):\(position.line) \(change.recordType) \(change.recordName): \(warning)")
                        }
                    case .rejected(let problems):
                        tally.count(change, rejected: true)
                        try rejects.reject(file: input, position: position, change: change, problems: problems, text: nil)
                    }
                case .invalid(let error, let position, let text):
                    tally.unreadable += 1
                    try rejects.reject(file: input, position: position, change: nil, problems: [error.problem], text: text)
                }
                console.progress("reading \(input): \(tally.read) records")
            }
        }
        console.logger.info("read \(tally.read) records in \(Formatting.seconds(since: started))")
        let writing = Date()
        let creation = try CreationTime.resolve(flag: createdAt, inputs: inputs)
        let summary = try writer.finish(createdAt: creation) { progress in
            if case .writing(let done, let total) = progress {
                console.progress("writing \(output): \(Formatting.bytes(done)) of \(Formatting.bytes(total))")
            }
        }
        try rejects.commit()
        console.logger.info("wrote \(output) in \(Formatting.seconds(since: writing))")
        report(summary, tally: tally, rejected: rejects.count, warnings: warnings, started: started, console: console)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }

    private func report(
        _ summary: BundleSummary, tally: PackTally, rejected: Int, warnings: Int, started: Date, console: Console
    ) {
        let manifest = summary.manifest
        let bundleBytes = dryRun ? nil : (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int64) ?? nil
        var types: [JSONValue] = []
        var rows = [["RECORD TYPE", "ZONE", "RECORDS", "REJECTED"]]
        for file in manifest.files {
            let key = PackTally.Key(type: file.kind == .records ? file.recordType ?? "" : nil, zone: file.zoneID)
            let typeName = file.kind == .records ? file.recordType ?? "" : "(deletions)"
            rows.append([typeName, file.zoneID.description, "\(file.count)", "\(tally.rejected[key] ?? 0)"])
            types.append([
                "kind": .string(file.kind.rawValue), "record_type": file.recordType.map { .string($0) } ?? .null,
                "zone": .string(file.zoneID.description), "count": .integer(Int64(file.count)),
                "rejected": .integer(Int64(tally.rejected[key] ?? 0)),
            ])
        }
        for (key, count) in tally.rejected.sorted(by: { "\($0.key)" < "\($1.key)" })
        where !manifest.files.contains(where: { PackTally.Key(type: $0.kind == .records ? $0.recordType : nil, zone: $0.zoneID) == key }) {
            rows.append([key.type ?? "(deletions)", key.zone.description, "0", "\(count)"])
        }
        if tally.unreadable > 0 { rows.append(["(unreadable lines)", "", "0", "\(tally.unreadable)"]) }
        console.message(
            "summary",
            [
                "dry_run": .bool(dryRun), "bundle": .string(output), "format": .string(summary.format.rawValue),
                "records": .integer(Int64(manifest.recordCount)), "deletions": .integer(Int64(manifest.deletionCount)),
                "rejected": .integer(Int64(rejected)), "warnings": .integer(Int64(warnings)),
                "assets": .integer(Int64(manifest.assetCount)), "asset_bytes": .integer(manifest.assetBytes),
                "payload_bytes": .integer(summary.payloadBytes), "bundle_bytes": bundleBytes.map { .integer($0) } ?? .null,
                "record_type_order": .array(manifest.recordTypeOrder.map { .string($0) }),
                "dangling_references": .integer(Int64(summary.danglingReferences)), "files": .array(types),
                "seconds": .number((Date().timeIntervalSince(started) * 1000).rounded() / 1000),
            ])
        guard !console.quiet else { return }
        let verb = dryRun ? "would pack" : "packed"
        let size = bundleBytes.map { ", \(Formatting.bytes($0))" } ?? ""
        console.line(
            "\(verb) \(Formatting.count(manifest.recordCount, "record")), \(Formatting.count(manifest.deletionCount, "deletion")) "
                + "and \(Formatting.count(manifest.assetCount, "asset")) (\(Formatting.bytes(manifest.assetBytes))) "
                + "into \(output) (\(summary.format)\(size))")
        console.line("")
        for line in Formatting.table(rows, rightAligned: [2, 3]) { console.line(line) }
        if !manifest.dependencyCycles.isEmpty {
            console.line("")
            console.line("reference cycles between types: \(manifest.dependencyCycles.map { $0.joined(separator: " ↔ ") }.joined(separator: "; "))")
        }
        if rejected > 0 {
            console.line("")
            console.line("\(Formatting.count(rejected, "record")) rejected\(rejectFile.map { dryRun ? "" : ": see \($0)" } ?? "")")
        }
    }
}

/// One input line, decoded and prepared on a worker thread.
enum PackItem: Sendable {
    case prepared(PreparedChange, LineReader.Position)
    case invalid(RecordError, LineReader.Position, text: String?)

    init(_ item: NDJSONRecordReader.Item, _ preparer: ChangePreparer) {
        switch item {
        case .change(let change, let position): self = .prepared(preparer.prepare(change), position)
        case .invalid(let error, let position, let text): self = .invalid(error, position, text: text)
        }
    }
}

/// Per type and zone counts for the pack summary.
struct PackTally {
    struct Key: Hashable, CustomStringConvertible {
        var type: String?
        var zone: ZoneID
        var description: String { "\(type ?? "")\u{0}\(zone)" }
    }

    var rejected: [Key: Int] = [:]
    var read = 0
    var unreadable = 0

    mutating func count(_ change: RecordChange, rejected isRejected: Bool) {
        read += 1
        guard isRejected else { return }
        let key = Key(type: change.isDeletion ? nil : change.recordType, zone: change.zoneID)
        rejected[key, default: 0] += 1
    }
}
