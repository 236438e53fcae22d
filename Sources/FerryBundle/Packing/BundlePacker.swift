import FerryCore
import FerryRecords
import FerryTextInput
import Foundation

/// Packs files of records in CloudKit's JSON form (NDJSON, JSON documents, `records/modify` requests, compressed or
/// not) into a bundle: `ferry pack`'s pipeline.
///
/// Each file is read in batches; preparing its lines (rewriting them in canonical form, or decoding, validating and
/// encoding them) runs on every core, and admission into the bundle writer runs on the calling thread, in input
/// order, so the bundle is the same bytes however many cores prepared it. What is rejected or warned about is handed
/// to ``Events`` as it is found, with the input file and line.
public final class BundlePacker {
    /// What the packer tells its caller as it goes.
    public struct Events {
        /// A change accepted with a warning (CloudKit alone would refuse it), or a warning found at the end.
        public var warning: (_ file: String, _ line: Int, _ change: RecordChange, _ warning: RecordProblem) throws -> Void
        /// A change refused, or an input item that is no record (`change` nil, `text` the item).
        public var rejected: (_ rejection: Rejection) throws -> Void
        /// Changes read so far, once per batch.
        public var progress: (_ file: String, _ read: Int) -> Void

        /// Events that go to the given closures.
        public init(
            warning: @escaping (String, Int, RecordChange, RecordProblem) throws -> Void, rejected: @escaping (Rejection) throws -> Void,
            progress: @escaping (String, Int) -> Void
        ) {
            self.warning = warning
            self.rejected = rejected
            self.progress = progress
        }
    }

    /// A refused change or unreadable item, with where it was.
    public struct Rejection {
        /// The input file.
        public var file: String
        /// Its line, and the byte offset there when known (changes refused at the end have only the line).
        public var position: LineReader.Position?
        /// Its line.
        public var line: Int
        /// The change, when it could be decoded.
        public var change: RecordChange?
        /// Why.
        public var problems: [RecordProblem]
        /// The raw item, when it could not be decoded.
        public var text: String?
    }

    /// What was read, for the summary.
    public struct Counts: Sendable {
        /// Changes read (accepted or rejected).
        public var read = 0
        /// Items that are no record.
        public var unreadable = 0
        /// Changes rejected, per record type (`nil` for deletions) and zone.
        public var rejected: [RejectionKey: Int] = [:]

        mutating func reject(_ change: RecordChange) {
            rejected[RejectionKey(recordType: change.isDeletion ? nil : change.recordType, zoneID: change.zoneID), default: 0] += 1
        }
    }

    /// A record type (`nil` for deletions) and zone.
    public struct RejectionKey: Hashable, Sendable {
        /// The record type; `nil` for deletions.
        public var recordType: String?
        /// The zone.
        public var zoneID: ZoneID

        /// A key.
        public init(recordType: String?, zoneID: ZoneID) {
            self.recordType = recordType
            self.zoneID = zoneID
        }
    }

    let inputs: [String]
    let writer: BundleWriter
    let decoder: CloudKitJSONDecoder

    /// A packer of `inputs` (paths; `/dev/stdin` for standard input) into `writer`; asset paths resolve through
    /// `assets`.
    public init(inputs: [String], writer: BundleWriter, assets: DirectoryAssetProvider?) {
        self.inputs = inputs
        self.writer = writer
        var decoder = CloudKitJSONDecoder()
        if let assets {
            decoder.assetResolver = { path, fileName in try assets.resolve(path: path, fileName: fileName) }
        }
        self.decoder = decoder
    }

    /// Reads every input into the writer (which the caller then finishes), and handles what the finish finds.
    public func read(_ events: Events) throws -> Counts {
        var counts = Counts()
        let preparer = writer.preparer
        let decoder = self.decoder
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
                    counts.read += 1
                    for warning in found { try events.warning(input, position.line, change(), warning) }
                case .rejected(let problems):
                    let change = change()
                    counts.read += 1
                    counts.reject(change)
                    try events.rejected(
                        Rejection(file: input, position: position, line: position.line, change: change, problems: problems, text: nil))
                }
            }
            /// Admits one item of the file, or each operation of a request in turn, read in place.
            func admit(_ item: UnsafePointer<PackItem>, item index: Int, lines: borrowing PreparedLines) throws {
                switch item.pointee {
                case .batched(let line, let position):
                    try count(try writer.add(lines, at: line, origin: try origin(position, item: index)), at: position) {
                        lines.change(at: line).change
                    }
                case .prepared(let prepared, let position):
                    try count(try writer.add(prepared, origin: try origin(position, item: index)), at: position) { prepared.change }
                case .invalid(let error, let position, let text):
                    counts.unreadable += 1
                    try events.rejected(
                        Rejection(file: input, position: position, line: position.line, change: nil, problems: [error.problem], text: text))
                case .operations(let items):
                    // Numbered by their index in the request, which rises with their lines: several may share one.
                    try items.forEachInPlace { index, operation in try admit(operation, item: index, lines: lines) }
                }
            }
            try reader.forEachBatch(
                workers: OrderedParallelMap.defaultWorkers,
                context: { [decoder] in LinePreparer(decoder: decoder, validator: preparer.validator) },
                transform: { lines, preparing in PackBatch(lines, preparer, &preparing) }
            ) { batch in
                try batch.items.forEachInPlace { _, item in try admit(item, item: 0, lines: batch.lines) }
                events.progress(input, counts.read)
            }
        }
        return counts
    }

    /// Finishes the bundle; changes found wanting only now (repeated names, DELETE_SELF overflows) go to `events`
    /// and into `counts`.
    public func finish(
        createdAt: Date, counts: inout Counts, events: Events, progress: ((BundleWriter.Progress) -> Void)? = nil
    ) throws -> BundleSummary {
        let inputs = self.inputs
        var tally = counts
        let summary = try writer.finish(
            createdAt: createdAt, progress: progress,
            found: { finding in
                let place = InputPlace(packed: finding.origin)
                let (input, line) = (inputs.indices.contains(place.file) ? inputs[place.file] : "?", place.line)
                if finding.problem.severity == .error {
                    tally.reject(finding.change)
                    try events.rejected(
                        Rejection(file: input, position: nil, line: line, change: finding.change, problems: [finding.problem], text: nil))
                } else {
                    try events.warning(input, line, finding.change, finding.problem)
                }
            })
        counts = tally
        return summary
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
