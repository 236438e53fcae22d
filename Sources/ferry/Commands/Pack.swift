import ArgumentParser
import FerryBundle
import FerryCore
import FerryRecords
import Foundation

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
    var createdAt: String?

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
        if let createdAt, CreationTime.parse(createdAt) == nil {
            throw ValidationError("--created-at \(createdAt): expected an ISO 8601 time or seconds since 1970, from 1970 to the end of 9999")
        }
    }

    func run() async throws {
        try CommandRunner.run(global, label: "pack") { console in try pack(console) }
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
        var decoder = CloudKitJSONDecoder()
        if let provider {
            decoder.assetResolver = { path, fileName in try provider.resolve(path: path, fileName: fileName) }
        }
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
        var tally = BundleTally()
        var warnings = 0
        let preparer = writer.preparer
        for (fileIndex, input) in inputs.enumerated() {
            let reader = RecordFileReader(path: input, decoder: decoder)
            /// The place of an item, as the writer numbers changes.
            func origin(_ position: LineReader.Position, item index: Int) throws -> Int64 {
                let place = InputPlace(file: fileIndex, line: position.line, item: index)
                guard let origin = place.packed else {
                    throw CoreError(
                        .readFailed,
                        "\(input): line \(position.line) of input file \(fileIndex + 1) is past what Ferry numbers (\(InputPlace.maxFile + 1) files of \(InputPlace.maxLine) lines); split the input"
                    )
                }
                return origin
            }
            /// Counts an admitted change, or rejects it; `change` is the change, made only for a message.
            func count(_ admission: BundleWriter.Admission, at position: LineReader.Position, change: () -> RecordChange) throws {
                switch admission {
                case .accepted(let found):
                    tally.read += 1
                    for warning in found {
                        warnings += 1
                        let change = change()
                        console.warning("\(input):\(position.line) \(change.recordType) \(change.recordName): \(warning)")
                    }
                case .rejected(let problems):
                    let change = change()
                    tally.count(change, rejected: true)
                    try rejects.reject(file: input, position: position, change: change, problems: problems, text: nil)
                }
            }
            /// Admits one item of the file, or each operation of a request in turn, read in place
            /// (``Swift/Array/forEachInPlace(_:)``).
            func admit(_ item: UnsafePointer<PackItem>, item index: Int, lines: borrowing PreparedLines) throws {
                switch item.pointee {
                case .batched(let line, let position):
                    try count(try writer.add(lines, at: line, origin: try origin(position, item: index)), at: position) {
                        lines.change(at: line).change
                    }
                case .prepared(let prepared, let position):
                    try count(try writer.add(prepared, origin: try origin(position, item: index)), at: position) { prepared.change }
                case .invalid(let error, let position, let text):
                    tally.unreadable += 1
                    try rejects.reject(file: input, position: position, change: nil, problems: [error.problem], text: text)
                case .operations(let items):
                    // Numbered by their index in the request, which rises with their lines: several may share one.
                    try items.forEachInPlace { index, operation in try admit(operation, item: index, lines: lines) }
                }
                console.progress("reading \(input): \(tally.read) records")
            }
            // Preparing lines (rewriting them in canonical form, or decoding, validating and encoding them) runs on all
            // cores, a batch at a time; admission runs here, in input order.
            try reader.forEachBatch(
                workers: OrderedParallelMap.defaultWorkers,
                context: { [decoder] in LinePreparer(decoder: decoder, validator: preparer.validator) },
                transform: { lines, preparing in PackBatch(lines, preparer, &preparing) }
            ) { batch in
                try batch.items.forEachInPlace { _, item in try admit(item, item: 0, lines: batch.lines) }
            }
        }
        console.logger.info("read \(tally.read) records in \(Formatting.seconds(since: started))")
        let writing = Date()
        let summary = try writer.finish(
            createdAt: creation, progress: console.bundleProgress(output),
            found: { found in
                // Repeated names and DELETE_SELF overflows are only known once every record has been read.
                let place = InputPlace(packed: found.origin)
                let (input, line) = (inputs.indices.contains(place.file) ? inputs[place.file] : "?", place.line)
                if found.problem.severity == .error {
                    tally.reject(found.change)
                    try rejects.reject(file: input, line: line, change: found.change, problems: [found.problem])
                } else {
                    warnings += 1
                    console.warning("\(input):\(line) \(found.change.recordType) \(found.change.recordName): \(found.problem)")
                }
            })
        try rejects.commit()
        console.logger.info("wrote \(output) in \(Formatting.seconds(since: writing))")
        try BundleReport(
            output: output, dryRun: dryRun, rejectFile: rejectFile, verb: dryRun ? "would pack" : "packed", started: started
        ).print(summary, tally: tally, rejected: rejects.count, warnings: warnings, console: console)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }
}

/// One input line, decoded and prepared on a worker thread.
enum PackItem: Sendable {
    /// A line prepared into its batch's ``PreparedLines``, as its line `index` there.
    case batched(Int, LineReader.Position)
    indirect case prepared(PreparedChange, LineReader.Position)
    indirect case invalid(RecordError, LineReader.Position, text: String?)
    /// The operations of a CloudKit `records/modify` request, in order.
    case operations([PackItem])

    /// Prepares a line: straight from its bytes when it is a valid record of a common form, else decoded.
    init(_ line: borrowing RecordFileReader.Line, _ preparer: ChangePreparer, _ preparing: inout LinePreparer, into lines: inout PreparedLines) {
        guard let bytes = line.bytes else {
            self.init(line.decoded(), preparer)
            return
        }
        switch preparing.prepare(bytes, into: &lines) {
        case .batched(let index): self = .batched(index, line.position)
        case .prepared(let prepared): self = .prepared(prepared, line.position)
        case .declined: self.init(line.decoded(), preparer)
        }
    }

    init(_ item: consuming RecordFileReader.Item, _ preparer: ChangePreparer) {
        switch consume item {
        case .change(let change, let position): self = .prepared(preparer.prepare(change), position)
        case .invalid(let error, let position, let text): self = .invalid(error, position, text: text)
        case .operations(let items): self = .operations(items.map { PackItem($0, preparer) })
        }
    }
}

/// The lines of one batch, prepared on a worker thread: most in one ``PreparedLines``, the rest each on its own.
struct PackBatch: Sendable {
    var lines: PreparedLines
    var items: [PackItem] = []

    init(_ batch: borrowing RecordFileReader.Lines, _ preparer: ChangePreparer, _ preparing: inout LinePreparer) {
        // Canonical lines are about as long as the lines they were read from.
        var lines = PreparedLines(capacity: batch.byteCount + batch.byteCount / 8 + 1024)
        var items: [PackItem] = []
        items.reserveCapacity(batch.count)
        batch.forEach { line in items.append(PackItem(line, preparer, &preparing, into: &lines)) }
        (self.lines, self.items) = (lines, items)
    }
}
