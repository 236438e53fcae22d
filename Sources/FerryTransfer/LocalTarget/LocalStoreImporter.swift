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
        public var batchSize = 1000
        /// What to do when the target holds another version.
        public var policy = ConflictPolicy.clientWins
        /// Count everything, write nothing.
        public var dryRun = false
        /// Rules records must pass before they are written.
        public var validator = RecordValidator()

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
        try store.write { batch in
            try batch.takeDeferred(run: run).map { record in
                let result = try batch.apply(RecordOperation(.forceReplace, record))
                if case .failed(_, let code, let reason) = result {
                    return (record, .rejected(code: code.rawValue, reason: "written without its VALIDATE references: \(reason)"))
                }
                return (record, .updated)
            }
        }
    }

    /// Runs the copy; `report` receives each change's outcome once its transaction committed.
    public func run(_ report: (SourceChange, TransferOutcome) throws -> Void) throws -> TransferTally {
        var tally = TransferTally()
        let skip = options.dryRun ? 0 : try resumePoint()
        if !options.dryRun {
            let prepared = try source.prepare(for: store)
            tally.assets += prepared.assets
            tally.assetBytes += prepared.bytes
        }
        var pending: [SourceChange] = []
        var position: Int64 = 0
        var tallyOfDryRun = TransferTally()

        func commit(finished: Bool) throws {
            let batchChanges = pending
            pending.removeAll(keepingCapacity: true)
            let done = position
            var newAssets = (0, Int64(0), 0)
            let outcomes = try store.write { batch -> [TransferOutcome] in
                let applier = ChangeApplier(batch: batch, source: source, options: options, run: run)
                let outcomes = try batchChanges.map { try applier.apply($0.change) }
                try batch.setCheckpoint(run: run, source: source.description, CopyCheckpoint(done: done, finished: finished))
                newAssets = (applier.assets, applier.assetBytes, applier.zonesCreated)
                return outcomes
            }
            tally.assets += newAssets.0
            tally.assetBytes += newAssets.1
            tally.zonesCreated += newAssets.2
            for (change, outcome) in zip(batchChanges, outcomes) {
                tally.count(change.change, outcome)
                try report(change, outcome)
            }
        }

        if options.dryRun {
            try store.dryRun { batch in
                let applier = ChangeApplier(batch: batch, source: source, options: options, run: run)
                try source.forEachChange { change in
                    let outcome = try applier.apply(change.change)
                    tallyOfDryRun.count(change.change, outcome)
                    try report(change, outcome)
                }
                tallyOfDryRun.assets = applier.assets
                tallyOfDryRun.assetBytes = applier.assetBytes
                tallyOfDryRun.zonesCreated = applier.zonesCreated
            }
            return tallyOfDryRun
        }
        try source.forEachChange { change in
            position += 1
            if position <= skip {
                tally.count(change.change, .resumed)
                try report(change, .resumed)
                return
            }
            pending.append(change)
            if pending.count >= options.batchSize { try commit(finished: false) }
        }
        try commit(finished: false)
        tally.patched = try patchDeferred()
        try store.write { batch in
            try batch.setCheckpoint(run: run, source: source.description, CopyCheckpoint(done: position, finished: true))
        }
        return tally
    }
}

/// Applies single changes inside one transaction.
final class ChangeApplier {
    let batch: LocalStoreBatch
    let source: any ChangeSource
    let options: LocalStoreImporter.Options
    var assets = 0
    var assetBytes: Int64 = 0
    var zonesCreated = 0
    /// Records written without their VALIDATE references, to write whole at the end.
    var deferred = 0
    private var dryRunAssets: Set<SHA256Digest> = []
    /// The copy run (deferring needs one).
    let run: String?

    init(batch: LocalStoreBatch, source: any ChangeSource, options: LocalStoreImporter.Options, run: String?) {
        self.batch = batch
        self.source = source
        self.options = options
        self.run = run
    }

    func apply(_ change: RecordChange) throws -> TransferOutcome {
        let problems = options.validator.problems(in: change).filter { $0.severity == .error }
        if !problems.isEmpty {
            return .rejected(code: "INVALID", reason: problems.map(\.description).joined(separator: "; "))
        }
        switch change {
        case .deletion(let deletion):
            guard let state = try batch.lookup(deletion.id), !state.isDeleted else { return .unchanged }
            return outcome(try batch.apply(RecordOperation.delete(deletion)), success: .deleted)
        case .record(let record):
            return try apply(record)
        }
    }

    private func apply(_ incoming: Record) throws -> TransferOutcome {
        var record = incoming
        record.system = nil
        if try batch.createZone(record.zoneID) { zonesCreated += 1 }
        for field in record.fields {
            for asset in field.value.assets where try !batch.hasAsset(asset) {
                guard source.canSupply(asset) else {
                    return .rejected(code: "MISSING_ASSET", reason: "\(field.name): asset \(asset.sha256) (\(asset.size) bytes) is not available")
                }
                if options.dryRun {
                    // Counted once; a bundle's assets would have been streamed in before its records.
                    if dryRunAssets.insert(asset.sha256).inserted {
                        assets += 1
                        assetBytes += asset.size
                    }
                    continue
                }
                guard let provider = source.assets else { continue }
                if try batch.storeAsset(asset, from: provider) {
                    assets += 1
                    assetBytes += asset.size
                }
            }
        }
        let existing = try batch.lookup(record.id)
        let write = RecordOperation(.forceReplace, record)
        let encoded = LocalStoreBatch.encode(record)
        guard let existing else { return try writeBreakingCycles(record, encoded: encoded, success: .created) }
        if existing.isDeleted {
            switch options.policy {
            case .clientWins: return outcome(try batch.apply(write, encoded: encoded), success: .created)
            case .fail: return .rejected(code: "CONFLICT", reason: "the target deleted this record")
            case .serverWins, .newer: return .kept(reason: "the target deleted this record; deletes win")
            }
        }
        if existing.contentDigest == encoded.digest { return .unchanged }
        switch options.policy {
        case .clientWins:
            return outcome(try batch.apply(write, encoded: encoded), success: .updated)
        case .serverWins:
            return .kept(reason: "the target holds another version (server-wins)")
        case .fail:
            return .rejected(code: "CONFLICT", reason: "the target holds another version (change tag \(existing.changeTag))")
        case .newer(let field):
            let theirs = try batch.record(record.id)?.fields[field]
            guard case .timestamp(let mine)? = record.fields[field] else {
                return .kept(reason: "the source's record has no TIMESTAMP \(field) to compare")
            }
            if case .timestamp(let target)? = theirs, target >= mine {
                return .kept(reason: "the target's \(field) is as new or newer")
            }
            return outcome(try batch.apply(write, encoded: encoded), success: .updated)
        }
    }

    /// Writes a record; when a VALIDATE reference points at a record not written yet (a reference cycle, or a child
    /// before its parent), writes it without those references first and defers the whole record to the run's end.
    private func writeBreakingCycles(_ record: Record, encoded: (body: [UInt8], digest: SHA256Digest), success: TransferOutcome) throws
        -> TransferOutcome
    {
        let result = try batch.apply(RecordOperation(.forceReplace, record), encoded: encoded)
        guard case .failed(_, .validatingReferenceError, _) = result, let run else { return outcome(result, success: success) }
        var trimmed = record
        for field in record.fields where field.value.references.contains(where: { $0.action == .validate }) {
            trimmed.fields[field.name] = nil
        }
        let retried = try batch.apply(RecordOperation(.forceReplace, trimmed))
        guard case .saved = retried else { return outcome(result, success: success) }
        try batch.deferRecord(record, run: run)
        deferred += 1
        return success
    }

    private func outcome(_ result: RecordOutcome, success: TransferOutcome) -> TransferOutcome {
        if case .failed(_, let code, let reason) = result { return .rejected(code: code.rawValue, reason: reason) }
        return success
    }
}
