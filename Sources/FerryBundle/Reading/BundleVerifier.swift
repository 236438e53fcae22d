import FerryCore
import FerryJSON
import FerryRecords
import FerrySorting

/// The result of a full check of a bundle.
public struct VerificationReport: Sendable {
    /// Every problem found, in the order found (at most ``maxIssues`` kept; ``issueCount`` counts all).
    public var issues: [BundleError] = []
    /// The number of problems found.
    public var issueCount = 0
    /// Record lines checked.
    public var recordsChecked = 0
    /// Deletion lines checked.
    public var deletionsChecked = 0
    /// Asset files checked.
    public var assetsChecked = 0
    /// Payload bytes read.
    public var bytesChecked: Int64 = 0
    /// Warnings about records that do not make the bundle invalid, such as the DELETE_SELF limit.
    public var warnings: [String] = []

    /// How many issues are kept in ``issues``.
    public static let maxIssues = 100

    /// Whether the bundle passed.
    public var isValid: Bool { issueCount == 0 }

    mutating func add(_ issue: BundleError) {
        issueCount += 1
        if issues.count < Self.maxIssues { issues.append(issue) }
    }
}

extension BundleReader {
    /// Checks the whole bundle: every entry's path, type and size, every SHA-256, `Payload-Oxum`, and every record:
    /// that it decodes, is in canonical form, is in the file of its type and zone, follows the schema and CloudKit's
    /// rules, is unique, and that every asset it references is present.
    /// - Parameters:
    ///   - checksumsOnly: check entries, sizes and checksums (what a BagIt validator checks) but do not decode
    ///     the records.
    ///   - temporaryDirectory: where record identities and DELETE_SELF references go when there are too many to count
    ///     in memory (default `$TMPDIR`).
    ///   - progress: called with payload bytes read so far.
    ///   - onIssue: called with every problem, in the order found, as it is found (the report keeps only the first
    ///     ``VerificationReport/maxIssues``); memory does not grow with their number.
    /// - Returns: the report; structural damage (an unsafe or unreadable archive) throws instead.
    public func verify(
        checksumsOnly: Bool = false, temporaryDirectory: String? = nil, progress: ((Int64) -> Void)? = nil,
        onIssue: ((BundleError) -> Void)? = nil
    ) throws -> VerificationReport {
        let verifier = BundleVerifier(reader: self, checksumsOnly: checksumsOnly, temporaryDirectory: temporaryDirectory)
        verifier.onIssue = onIssue
        try scan(verifier, complete: true, progress: progress)
        try verifier.finish()
        return verifier.report
    }
}

/// Checks record files line by line during a scan: per-line checks on worker threads, cross-record checks in order.
final class BundleVerifier: BundleVisitor {
    private(set) var report = VerificationReport()
    private let reader: BundleReader
    /// Every record and deletion identity and DELETE_SELF reference, by line, for the checks at the end.
    ///
    /// Duplicates and targets with too many DELETE_SELF references are found in bounded memory. A line's sequence is
    /// its place in the scan (file by file); its location's file is the file's rank among the bundle's payload files,
    /// which names it at the end.
    private let ledger: RecordLedger
    /// The number of record files scanned so far.
    private var scannedFiles = 0
    /// The assets records reference, sorted at the end to find those the bundle lacks (in bounded memory).
    private let referencedAssets: ExternalSorter<AssetEntry>
    private var splitter = LineSplitter()
    private var current: BundleManifest.RecordFile?
    /// Lines not yet handed to the workers: of several files when they are small (a bundle may have one file per zone,
    /// hundreds of thousands), with the issues found around them, so that the workers are woken once per batch, not
    /// per file, and issues keep the scan's order.
    private var batch: LineBatch?
    private var pipeline: OrderedPipeline<LineBatch, CheckedBatch>?
    private let checksumsOnly: Bool
    /// Where each problem goes as it is found, besides the report.
    var onIssue: ((BundleError) -> Void)?

    init(reader: BundleReader, checksumsOnly: Bool, temporaryDirectory: String?) {
        self.reader = reader
        self.checksumsOnly = checksumsOnly
        ledger = RecordLedger(
            deleteSelfLimit: RecordValidator.Limits().maxDeleteSelfReferencesPerTarget, temporaryDirectory: temporaryDirectory)
        referencedAssets = ExternalSorter(
            memoryLimit: reader.scratchMemoryLimit, prefix: "ferry-referenced-assets", temporaryDirectory: temporaryDirectory)
    }

    func wants(_ entry: BundleEntry) -> Bool {
        if case .records = entry.kind { return !checksumsOnly }
        return false
    }

    func begin(_ entry: BundleEntry) throws {
        guard case .records(let file) = entry.kind, let rank = entry.rank else { return }
        current = file
        scannedFiles += 1
        splitter = LineSplitter()
        if pipeline == nil {
            let checker = LineChecker(schema: reader.schema, archive: reader.path)
            pipeline = OrderedPipeline(
                workers: OrderedParallelMap.defaultWorkers, transform: { checker.check($0) },
                consume: { [unowned self] checked in try apply(checked) })
        }
        if batch == nil { batch = LineBatch() }
        batch?.start(file, scanIndex: scannedFiles - 1, rank: rank)
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file = current else { return }
        do {
            try splitter.feed(bytes) { line, number in
                batch?.append(line, number: number)
                if let full = batch, full.isFull { try handOver(full) }
            }
        } catch let error as BundleError {
            try note(located(error, file: file), after: true)
            current = nil
        }
    }

    func end(_ entry: BundleEntry, intact: Bool) throws {
        guard case .records(let file) = entry.kind else { return }
        defer { current = nil }
        guard current != nil else { return }
        do {
            try splitter.finish(file: file.path)
        } catch let error as BundleError {
            try note(located(error, file: file), after: true)
        }
        if splitter.lineCount != file.count {
            try note(
                BundleError(.invalidRecord, "\(reader.path): \(file.path) has \(splitter.lineCount) lines, data/manifest.json says \(file.count)"),
                after: true)
        }
    }

    func issue(_ error: BundleError) throws { try note(error, after: false) }

    /// Hands the lines and issues waiting in the current batch to the checks now, and waits for them, when any issue
    /// waits: a caller that stops at the first problem (extraction) then hears of it before it reads further (the
    /// rest of a 10 GiB line, say).
    func settleIssues() throws {
        guard let pending = batch, pending.issueCount > 0 else { return }
        try handOver(pending)
        try pipeline?.drain()
    }

    /// Hands a batch to the workers and starts the next, going on with the file being read, if any.
    private func handOver(_ full: LineBatch) throws {
        try pipeline?.submit(full)
        batch = LineBatch()
        if current != nil { batch?.continueFile(of: full) }
    }

    /// Reports an issue in the scan's order: at once when no lines wait for the workers; else with the lines of the
    /// file being read, before them (what the scan says of the file, such as a checksum mismatch) or after them; else
    /// after every line so far.
    private func note(_ error: BundleError, after: Bool) throws {
        guard pipeline != nil else { return add(error) }
        if batch == nil { batch = LineBatch() }
        batch?.note(error, after: after, ofFile: current != nil)
        // Issues without lines (millions of unlisted entries, say) are handed over like lines, so that they never
        // pile up in a batch.
        if let full = batch, full.isFull { try handOver(full) }
    }

    func finish() throws {
        if let rest = batch { try pipeline?.submit(rest) }
        batch = nil
        try pipeline?.drain()
        pipeline?.cancel()
        if !checksumsOnly { try reportFindings() }
        // The scan checked every asset the manifest lists (and reported any missing): those are the bundle's.
        report.assetsChecked = reader.metadata.assets.count
        if checksumsOnly {
            report.recordsChecked = reader.manifest.recordCount
            report.deletionsChecked = reader.manifest.deletionCount
        }
        var last: SHA256Digest?
        try referencedAssets.forEachSorted { reference in
            guard reference.digest != last else { return }
            last = reference.digest
            guard try !reader.metadata.assets.contains(reference.digest) else { return }
            add(
                BundleError(
                    .missingAsset, "\(reader.path): records reference asset \(reference.digest) (\(reference.size) bytes), which the bundle lacks"))
        }
        referencedAssets.reset()
        report.bytesChecked = reader.payloadBytes
    }

    /// Reports each identity that occurs again (at the later line) and each target that gets more DELETE_SELF
    /// references than CloudKit allows (at the line of the reference that goes over); the records are named from a
    /// second pass over only the files that hold such lines (the first kept no lines).
    private func reportFindings() throws {
        let resolution: RecordLedger.Resolution
        do {
            resolution = try ledger.resolve()
            ledger.reset()
        } catch {
            add(BundleError(.invalidRecord, "\(reader.path): could not check records for duplicates: \(error)"))
            return
        }
        let locations = resolution.overflows.map(\.location) + resolution.duplicates.map(\.location)
        guard !locations.isEmpty else { return }
        // The files that hold those lines, picked out of the bundle's payload files by rank.
        let ranks = Set(locations.map(\.file))
        var files: [Int: BundleManifest.RecordFile] = [:]
        try reader.metadata.payloadFiles.forEach { _, entry in
            if ranks.contains(entry.rank) { files[entry.rank] = entry.file }
        }
        func file(_ location: FileLine) -> BundleManifest.RecordFile? { files[location.file] }
        var wanted: [String: Set<Int>] = [:]
        for location in locations {
            if let path = file(location)?.path { wanted[path, default: []].insert(location.line) }
        }
        let picker = LinePicker(wanted: wanted)
        try? reader.scan(picker, complete: false)
        func change(at location: FileLine) -> RecordChange? { file(location).flatMap { picker.found[$0.path]?[location.line] } }
        let validator = RecordValidator()
        for overflow in resolution.overflows {
            var named: RecordProblem?
            if case .record(let record)? = change(at: overflow.location) {
                named = validator.deleteSelfLimitWarning(in: record, target: overflow.target)
            }
            let unknown = RecordID(recordName: "?", zoneID: file(overflow.location)?.zoneID ?? .default)
            let warning = named ?? validator.deleteSelfLimitWarning(field: "?", target: unknown)
            report.warnings.append(warning.description)
        }
        for duplicate in resolution.duplicates {
            let id = change(at: duplicate.location).map { "\($0.zoneID)/\($0.recordName)" } ?? "?"
            let path = file(duplicate.location)?.path ?? "?"
            add(BundleError(.invalidRecord, "\(reader.path): \(path) line \(duplicate.location.line): record \(id) appears more than once"))
        }
    }

    private func add(_ error: BundleError) {
        report.add(error)
        onIssue?(error)
    }

    private func located(_ error: BundleError, file: BundleManifest.RecordFile) -> BundleError {
        BundleError(error.code, "\(reader.path): \(file.path): \(error.message)", cause: error.cause)
    }

    /// Applies the checks that need the lines before (referenced assets), and notes identities and DELETE_SELF
    /// references for the checks at the end.
    private func apply(_ checked: CheckedBatch) throws {
        var deleteSelf = checked.facts.deleteSelf[...]
        for segment in checked.batch.segments {
            for error in segment.before { add(error) }
            // By index: a `for … in` loop copies (retains and releases) every outcome it hands out.
            for index in segment.lines {
                for message in checked.outcomes[index].failures { add(BundleError(.invalidRecord, message)) }
                guard let key = checked.outcomes[index].key else { continue }
                if checked.outcomes[index].isDeletion { report.deletionsChecked += 1 } else { report.recordsChecked += 1 }
                let line = checked.batch.lines[index].number
                try ledger.noteIdentity(key, type: 0, sequence: segment.sequence(line), at: FileLine(file: segment.rank, line: line))
            }
            // The references are in line order.
            while let (index, target) = deleteSelf.first, index < segment.lines.upperBound {
                deleteSelf.removeFirst()
                let line = checked.batch.lines[index].number
                try ledger.noteReference(
                    to: target, from: 0, deleteSelf: true, sequence: segment.sequence(line), at: FileLine(file: segment.rank, line: line))
            }
            for error in segment.after { add(error) }
        }
        for (digest, size) in checked.facts.assets { try referencedAssets.append(AssetEntry(digest: digest, size: size)) }
    }
}

/// Picks given lines out of record files, in a second pass, to name the records of a message.
private final class LinePicker: BundleVisitor {
    /// Line numbers wanted, by file path.
    let wanted: [String: Set<Int>]
    /// The changes on those lines.
    private(set) var found: [String: [Int: RecordChange]] = [:]
    private var current: String?
    private var splitter = LineSplitter()
    private let decoder = CloudKitJSONDecoder()

    init(wanted: [String: Set<Int>]) { self.wanted = wanted }

    func wants(_ entry: BundleEntry) -> Bool {
        if case .records(let file) = entry.kind { return wanted[file.path] != nil }
        return false
    }

    func begin(_ entry: BundleEntry) throws {
        if case .records(let file) = entry.kind { current = file.path } else { current = nil }
        splitter = LineSplitter()
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws {
        guard let path = current, let lines = wanted[path] else { return }
        try splitter.feed(bytes) { line, number in
            if lines.contains(number), let change = try? decoder.decode(line: line) { found[path, default: [:]][number] = change }
        }
    }

    func end(_ entry: BundleEntry, intact: Bool) throws { current = nil }

    func issue(_ error: BundleError) throws {}
}

/// Lines of record files, copied out of the archive stream for a worker, with the issues the scan found around them.
private struct LineBatch: Sendable {
    /// A stretch of lines of one file, or none (issues only).
    struct Segment: Sendable {
        var file: BundleManifest.RecordFile?
        /// The file's place in the scan, and its rank among the payload files.
        var scanIndex: Int
        var rank: Int
        /// Its lines, as positions in ``LineBatch/lines``.
        var lines: Range<Int>
        /// Issues to report before the lines, and after them.
        var before: [BundleError] = []
        var after: [BundleError] = []

        /// A line's sequence: it orders lines as the scan read them.
        func sequence(_ line: Int) -> Int64 { FileLine(file: scanIndex, line: line).packed }
    }

    var segments: [Segment] = []
    var bytes: [UInt8] = []
    var lines: [(range: Range<Int>, number: Int)] = []

    init() {
        bytes.reserveCapacity(1 << 20)
    }

    /// The issues noted in the batch.
    var issueCount = 0

    var isFull: Bool { bytes.count >= 1 << 20 || lines.count >= 4096 || issueCount >= 1024 }

    /// Starts the lines of a file.
    mutating func start(_ file: BundleManifest.RecordFile, scanIndex: Int, rank: Int) {
        segments.append(Segment(file: file, scanIndex: scanIndex, rank: rank, lines: lines.count..<lines.count))
    }

    /// Goes on with the file whose lines (or issues) ended a full batch.
    mutating func continueFile(of full: LineBatch) {
        guard let last = full.segments.last(where: { $0.file != nil }), let file = last.file else { return }
        start(file, scanIndex: last.scanIndex, rank: last.rank)
    }

    mutating func append(_ line: UnsafeRawBufferPointer, number: Int) {
        let start = bytes.count
        bytes.append(contentsOf: line)
        lines.append((start..<bytes.count, number))
        segments[segments.count - 1].lines = segments[segments.count - 1].lines.lowerBound..<lines.count
    }

    /// Adds an issue before or after the lines of the last segment, when it is about that file; else after every
    /// line so far.
    mutating func note(_ error: BundleError, after: Bool, ofFile: Bool) {
        issueCount += 1
        if segments.isEmpty || (!ofFile && segments[segments.count - 1].file != nil) {
            segments.append(Segment(file: nil, scanIndex: -1, rank: -1, lines: lines.count..<lines.count))
        }
        if after || !ofFile {
            segments[segments.count - 1].after.append(error)
        } else {
            segments[segments.count - 1].before.append(error)
        }
    }
}

/// The outcomes of one batch of lines, with the lines themselves (to name a record in the rare message that needs it).
private struct CheckedBatch: Sendable {
    let batch: LineBatch
    /// One per line.
    var outcomes: [LineOutcome] = []
    /// The batch's DELETE_SELF targets and referenced assets, in line order.
    var facts = CanonicalRecordScanner.Facts()
}

/// What the checks of one line found, and what the checks across lines need of it (the archive and file are its
/// segment's).
private struct LineOutcome: Sendable {
    /// The identity's key, when the line decoded.
    var key: RecordKey?
    var isDeletion = false
    /// What is wrong with the line on its own, as messages naming the archive, file and line.
    var failures: [String] = []
}

/// The per-line checks, which need no other line: decoding, canonical form, file placement, schema, CloudKit rules.
///
/// Lines that are canonical records of the file's type and zone, as good bundles hold, are checked in place by a
/// ``CanonicalRecordScanner``; the others are decoded and re-encoded, which names what is wrong with them.
private struct LineChecker: Sendable {
    let schema: RecordSchema
    let archive: String
    let decoder = CloudKitJSONDecoder()
    let validator = RecordValidator()

    func check(_ batch: LineBatch) -> CheckedBatch {
        var checked = CheckedBatch(batch: batch)
        checked.outcomes.reserveCapacity(batch.lines.count)
        var json = JSONWriter(capacity: 4096)
        var checkedFields: CheckedFields?
        batch.bytes.withUnsafeBytes { buffer in
            for segment in batch.segments {
                guard let file = segment.file else { continue }
                var scanner =
                    file.kind == .records
                    ? file.recordType.flatMap { CanonicalRecordScanner(recordType: $0, zoneID: file.zoneID, fieldTypes: schema.recordTypes[$0]) }
                    : nil
                for index in segment.lines {
                    let line = UnsafeRawBufferPointer(rebasing: buffer[batch.lines[index].range])
                    if let key = scanner?.accept(line, index: index, into: &checked.facts) {
                        checked.outcomes.append(LineOutcome(key: key))
                    } else {
                        checked.outcomes.append(
                            check(
                                line, index: index, number: batch.lines[index].number, file: file, json: &json,
                                checkedFields: &checkedFields, facts: &checked.facts))
                    }
                }
            }
        }
        return checked
    }

    private func check(
        _ line: UnsafeRawBufferPointer, index: Int, number: Int, file: BundleManifest.RecordFile, json: inout JSONWriter,
        checkedFields: inout CheckedFields?, facts: inout CanonicalRecordScanner.Facts
    ) -> LineOutcome {
        var outcome = LineOutcome()
        /// Records a failure of this line, located in the archive.
        func fail(_ message: String) { outcome.failures.append("\(archive): \(file.path) line \(number): \(message)") }
        let change: RecordChange
        do {
            change = try decoder.decode(line: line)
        } catch {
            fail(error.message)
            return outcome
        }
        outcome.key = RecordKey(change.id)
        outcome.isDeletion = change.isDeletion
        if case .record(let record) = change {
            record.forEachDeleteSelfReference { _, reference in facts.deleteSelf.append((index, RecordKey(reference.target))) }
            for field in record.fields {
                for asset in field.value.assets { facts.assets.append((asset.sha256, asset.size)) }
            }
        }
        json.reset()
        change.writeCloudKitJSON(to: &json)
        if !json.bytes.withUnsafeBytes({ $0.hasSameBytes(as: line) }) {
            fail("not in canonical form (keys sorted, no spaces); it was changed after packing")
        }
        if change.zoneID != file.zoneID { fail("zone \(change.zoneID) does not belong in this file (zone \(file.zoneID))") }
        switch (change, file.kind) {
        case (.record(let record), .records):
            if record.recordType != file.recordType {
                fail("record type \(record.recordType) does not belong in this file (\(file.recordType ?? ""))")
            }
            // Records of a file mostly share one set of fields: a set already found in the schema is not looked up again.
            if checkedFields?.matches(record) != true {
                if let fields = schema.recordTypes[record.recordType] {
                    var fits = true
                    for field in record.fields where !(fields[field.name]?.accepts(field.value.type) ?? false) {
                        fits = false
                        fail("field \(field.name) (\(field.value.type.tag)) is not in data/schema.json as that type")
                    }
                    if fits { checkedFields = CheckedFields(record) }
                } else {
                    fail("record type \(record.recordType) is not in data/schema.json")
                }
            }
            for problem in validator.problems(in: record) where problem.severity == .error { fail(problem.description) }
        case (.deletion(let deletion), .deletions):
            for problem in validator.problems(in: deletion) where problem.severity == .error { fail(problem.description) }
        default:
            fail("a \(change.isDeletion ? "deletion" : "record") in a \(file.kind.rawValue) file")
        }
        return outcome
    }

    /// A record type with its field names and types, as last found in the schema (compared field by field; the
    /// hashed ``RecordSchema/Layout`` would cost more than the lookups it saves here).
    struct CheckedFields {
        let recordType: String
        let fields: [(name: String, type: FieldType)]

        init(_ record: Record) {
            recordType = record.recordType
            fields = record.fields.map { ($0.name, $0.value.type) }
        }

        /// Whether a record has exactly this type and these fields.
        func matches(_ record: Record) -> Bool {
            guard record.recordType == recordType, record.fields.count == fields.count else { return false }
            for (field, known) in zip(record.fields, fields) where field.name != known.name || field.value.type != known.type {
                return false
            }
            return true
        }
    }
}
