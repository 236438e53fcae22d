import FerryBackend
import FerryCore
import FerryLocalStore
import FerryRecords
import Foundation

/// Copies a source's changes into a local store: idempotent, resumable, with a conflict policy.
///
/// Changes are applied in batches, each in one transaction together with a checkpoint (how many of the source's
/// changes are done). After an interruption — Ctrl-C, `kill -9`, a crash — the same copy skips what the checkpoint
/// covers and goes on; a transaction that did not commit left nothing. A record equal to the target's (same content
/// digest) is left alone, so copying the same source again writes nothing.
///
/// A dry run does all of it inside one transaction that is rolled back: its counts are exactly a real run's.
public final class LocalStoreImporter {
    /// Tuning and choices.
    public struct Options: Sendable {
        /// Changes per transaction (and checkpoint).
        ///
        /// Large transactions write hot pages (the end of the records table, index pages) to the WAL once instead of
        /// once per commit.
        public var batchSize = 10_000
        /// Record bytes per transaction at most, whatever ``batchSize`` says, so large records keep memory bounded.
        public var batchBytes = 16 << 20
        /// What to do when the target holds another version.
        public var policy = ConflictPolicy.clientWins
        /// Count everything, write nothing.
        public var dryRun = false
        /// Rules records must pass before they are written.
        public var validator = RecordValidator()
        /// Where the tally's rows go when there are many (record types times zones; default `$TMPDIR`).
        public var temporaryDirectory: String?
        /// Called after each transaction commits, with the changes it held and how many of the source's changes the
        /// checkpoint now covers (for logs).
        public var onCommit: (@Sendable (_ changes: Int, _ checkpoint: Int64) -> Void)?
        /// Called on the copying thread with how many of the source's changes have been read, a batch at a time (for
        /// progress).
        public var onRead: (@Sendable (_ changes: Int64) -> Void)?

        /// The defaults.
        public init() {}
    }

    let store: LocalStore
    let source: any ChangeSource
    let options: Options
    /// The copy's identity in the store's journal: a digest of the source's fingerprint.
    public let run: String

    /// Prepares a copy of `source` into `store`.
    public init(store: LocalStore, source: any ChangeSource, options: Options = Options()) {
        self.store = store
        self.source = source
        self.options = options
        run = SHA256Hasher.digest(Array(source.fingerprint.utf8)).description
    }

    /// The number of changes an earlier interrupted run of this copy committed (0 when there is none).
    public func resumePoint() throws -> Int64 {
        try store.write { batch in
            guard let checkpoint = try batch.checkpoint(run: run), !checkpoint.finished else { return 0 }
            return checkpoint.done
        }
    }

    /// Writes whole the records that went in without a reference closing a cycle; their targets exist now.
    /// - Returns: how many were patched; one whose target never came stays written without it, and is reported.
    private func patchDeferred() throws -> [(record: Record, outcome: TransferOutcome)] {
        try store.write { batch in try patchDeferred(in: batch) }
    }

    private func patchDeferred(in batch: LocalStoreBatch) throws -> [(record: Record, outcome: TransferOutcome)] {
        try batch.takeDeferred(run: run).map { record in
            let result = try batch.apply(RecordOperation(.forceReplace, record))
            if case .failed(_, let code, let reason, _) = result {
                return (record, .rejected(code: code.rawValue, reason: "written without its VALIDATE references: \(reason)"))
            }
            return (record, .updated)
        }
    }

    /// Runs the copy; `report` receives each change's outcome once its transaction committed.
    ///
    /// The change comes `inout` only so that it is passed where it lies instead of being copied; the importer is done
    /// with it.
    public func run(_ report: (inout SourceChange, TransferOutcome) throws -> Void) throws -> TransferTally {
        let pipelined = source as? PipelinedChangeSource
        // Validation and encoding need no store state: the reading thread does them.
        pipelined?.prepareWrites(validator: options.validator)
        if options.dryRun { return try dryRun(report) }
        var tally = TransferTally(temporaryDirectory: options.temporaryDirectory)
        let skip = try resumePoint()
        let prepared = try source.prepare(for: store)
        tally.assets += prepared.assets
        tally.assetBytes += prepared.bytes
        // The first copy into an empty store builds the name and reference indexes once, at its end.
        if skip == 0 { try store.beginBulkLoad() }
        // Whole batches from the source wait for their transaction: keeping them copies no change.
        var pending: [[SourceChange]] = []
        var pendingCount = 0
        var pendingBytes = 0
        var position: Int64 = 0

        func commit() throws {
            // The batches are this function's own from here (moved out, not shared), so each change goes to the applier,
            // the tally and `report` by address (`inout`): passed by value, an element of an array is copied first,
            // every string and array in it retained and released.
            var batches: [[SourceChange]] = []
            swap(&batches, &pending)
            pendingCount = 0
            pendingBytes = 0
            let done = position
            let outcomes = try store.write { batch -> [TransferOutcome] in
                let applier = ChangeApplier(batch: batch, source: source, options: options, run: run)
                var outcomes: [TransferOutcome] = []
                for slot in batches.indices {
                    for index in batches[slot].indices { outcomes.append(try applier.apply(&batches[slot][index])) }
                }
                try batch.setCheckpoint(run: run, source: source.description, CopyCheckpoint(done: done, finished: false))
                tally.absorb(applier)
                return outcomes
            }
            options.onCommit?(outcomes.count, done)
            var next = 0
            for slot in batches.indices {
                for index in batches[slot].indices {
                    try tally.count(&batches[slot][index].change, outcomes[next])
                    try report(&batches[slot][index], outcomes[next])
                    next += 1
                }
            }
            for changes in consume batches { pipelined?.recycle(changes) }
        }

        try source.forEachBatch { batch in
            // A transaction ends exactly at its limits; the part of a batch that goes into it is kept whole when it is
            // the whole batch, else copied.
            var start = batch.startIndex
            func take(upTo end: Int) {
                guard start < end else { return }
                pending.append(start == batch.startIndex && end == batch.endIndex ? batch : Array(batch[start..<end]))
                start = end
            }
            for index in batch.indices {
                position += 1
                if position <= skip {
                    // Committed by the interrupted run: only reported.
                    var change = batch[index]
                    try tally.count(&change.change, .resumed)
                    try report(&change, .resumed)
                    start = index + 1
                    continue
                }
                pendingBytes += batch[index].pendingBytes
                pendingCount += 1
                if pendingCount >= options.batchSize || pendingBytes >= options.batchBytes {
                    take(upTo: index + 1)
                    try commit()
                }
            }
            take(upTo: batch.endIndex)
            options.onRead?(position)
        }
        try commit()
        try store.endBulkLoad()
        tally.patched = try patchDeferred()
        try store.write { batch in
            try batch.setCheckpoint(run: run, source: source.description, CopyCheckpoint(done: position, finished: true))
        }
        return tally
    }

    /// Everything a run would do, in one transaction that is rolled back.
    private func dryRun(_ report: (inout SourceChange, TransferOutcome) throws -> Void) throws -> TransferTally {
        var tally = TransferTally(temporaryDirectory: options.temporaryDirectory)
        try store.dryRun { batch in
            let applier = ChangeApplier(batch: batch, source: source, options: options, run: run)
            try source.forEachChange { change in
                var change = change
                let outcome = try applier.apply(&change)
                try tally.count(&change.change, outcome)
                try report(&change, outcome)
            }
            tally.absorb(applier)
            tally.patched = try patchDeferred(in: batch)
        }
        return tally
    }
}

extension LocalRecordStore: BulkCopying {
    /// The local store's bulk path: ``LocalStoreImporter``.
    public func bulkCopy(
        _ source: any ChangeSource, options: RecordCopier.Options, report: (inout SourceChange, TransferOutcome) throws -> Void
    ) throws -> TransferTally {
        var settings = LocalStoreImporter.Options()
        settings.batchSize = options.batchSize ?? settings.batchSize
        settings.batchBytes = options.batchBytes
        settings.policy = options.policy
        settings.dryRun = options.dryRun
        settings.validator = options.validator
        settings.temporaryDirectory = options.temporaryDirectory
        settings.onCommit = options.onCommit
        settings.onRead = options.onRead
        return try LocalStoreImporter(store: store, source: source, options: settings).run(report)
    }
}

extension TransferTally {
    /// Adds what an applier stored besides records: new assets and zones.
    mutating func absorb(_ applier: ChangeApplier) {
        assets += applier.assets
        assetBytes += applier.assetBytes
        zonesCreated += applier.zonesCreated
    }
}
