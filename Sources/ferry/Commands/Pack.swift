import ArgumentParser
import FerryBundle
import FerryCore
import FerryRecords
import Foundation
import Logging

/// `ferry pack`: build a bundle from files of CloudKit record dictionaries (NDJSON or JSON documents).
struct Pack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build a bundle from files of records in CloudKit's JSON form.",
        discussion: """
            Each record is a CloudKit record dictionary ({"recordName", "recordType", "zoneID", "fields"}); one \
            with "deleted": true is a deletion. Files are NDJSON (a record per line) or JSON documents: arrays of \
            records, CloudKit responses ({"records": [...]}), or records pretty-printed one after another; gzip or Zstandard compressed or not. \
            A CloudKit records/modify request ({"operations": [...]}) gives a record or deletion per operation; update \
            and forceUpdate, which hold no whole record, are rejected. An \
            ASSET field's value {"path": "photos/1.jpg"} names a file under --assets. Records that break CloudKit's \
            rules are rejected (exit 1) and listed in --reject-file.

            Examples:
              ferry pack records.ndjson --assets assets -o cars.tar.gz
              ferry pack response.json.gz -o backup.tar.zst --reject-file rejects.jsonl
              cat records.ndjson | ferry pack - -o out.zip
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Files of records: NDJSON or JSON documents ('-' for standard input).")
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
    var createdAt: TimeArgument?

    @Option(help: "Directory for scratch files (default: $TMPDIR).")
    var tempDir: String?

    @Option(
        help: """
            Zstandard compression threads for .tar.zst, beside the thread that frames the entries. Every count gives \
            the same bytes; each thread costs a few MB of memory.
            """)
    var threads: Int = 2

    @Flag(name: [.customShort("n"), .long], help: "Check and count everything; write nothing.")
    var dryRun = false

    func validate() throws {
        guard !records.isEmpty else { throw ValidationError("give at least one NDJSON file of records") }
        guard threads >= 1 && threads <= 64 else { throw ValidationError("--threads must be between 1 and 64") }
        if format == nil && ArchiveFormat(fileName: output) == nil {
            throw ValidationError("cannot tell the format of \(output); end it with .tar.gz, .tar.zst or .zip, or give --format")
        }
    }

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "pack") { console in try pack(console) }
    }

    private func pack(_ console: Console) throws -> Int32 {
        let started = Date()
        let inputs = records.map { $0 == "-" ? "/dev/stdin" : $0 }
        // Neither output may replace an input: checked now, and before each rename (the assets are found on the way).
        let files = RunFiles()
        for (input, name) in zip(inputs, records) { files.add(input, as: name == "-" ? "standard input" : "the records file \(name)") }
        if let rejectFile { try files.claim(output: rejectFile, as: "the reject file") }
        let provider = try assets.map { try DirectoryAssetProvider(root: $0, temporaryDirectory: tempDir) }
        if let provider { files.add(provider) }
        var options = BundleWriter.Options(
            source: .init(kind: "ndjson", description: records.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", ")))
        options.format = format
        options.temporaryDirectory = tempDir
        options.softwareAgent = "ferry \(Ferry.version)"
        options.zstdWorkers = threads
        options.dryRun = dryRun
        options.files = files
        // Known before reading: a .tar.zst bundle then writes its larger assets while the records are read.
        let creation = try CreationTime.resolve(flag: createdAt, inputs: inputs)
        options.createdAt = creation
        let writer = try BundleWriter(path: output, options: options, assets: provider)
        let rejects = try RejectLog(path: dryRun ? nil : rejectFile, console: console, files: files)
        var warnings = 0
        let events = BundlePacker.Events(
            warning: { input, line, change, warning in
                warnings += 1
                console.warning("\(input):\(line) \(change.recordType) \(change.recordName): \(warning)")
            },
            rejected: { rejection in
                if let position = rejection.position {
                    try rejects.reject(
                        file: rejection.file, position: position, change: rejection.change, problems: rejection.problems, text: rejection.text)
                } else if let change = rejection.change {
                    try rejects.reject(file: rejection.file, line: rejection.line, change: change, problems: rejection.problems)
                }
            },
            progress: { input, read in console.progress("reading \(input): \(read) records") })
        let packer = BundlePacker(inputs: inputs, writer: writer, assets: provider)
        var counts = try packer.read(events)
        console.logger.info("read \(counts.read) records in \(Formatting.seconds(since: started))")
        let writing = Date()
        let summary = try packer.finish(createdAt: creation, counts: &counts, events: events, progress: console.bundleProgress(output))
        try rejects.commit()
        console.logger.info("wrote \(output) in \(Formatting.seconds(since: writing))")
        try BundleReport(
            output: output, dryRun: dryRun, rejectFile: rejectFile, verb: dryRun ? "would pack" : "packed", started: started
        ).print(summary, tally: BundleTally(counts), rejected: rejects.count, warnings: warnings, console: console)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }
}
