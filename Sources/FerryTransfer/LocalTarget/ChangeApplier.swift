import FerryBackend
import FerryCore
import FerryLocalStore
import FerryRecords

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

    /// Applies a change, using the work done ahead on the reading thread when there is some, else doing it here.
    ///
    /// `inout` so that the change is read where it lies in the caller's batch, not copied; a change the reading thread
    /// did not prepare gains its warnings in its problems. Its preparation is not kept on it: the batch goes back to
    /// the reading thread, and buffers made here are freed here (a free on another thread contends for malloc's lock).
    func apply(_ source: inout SourceChange) throws -> TransferOutcome {
        if let prepared = source.prepared { return try apply(source.change, prepared: prepared) }
        let prepared = PreparedWrite(source.change, validator: options.validator)
        prepared.reportWarnings(in: &source)
        return try apply(source.change, prepared: prepared)
    }

    private func apply(_ change: RecordChange, prepared: PreparedWrite) throws -> TransferOutcome {
        let problems = prepared.errors
        if !problems.isEmpty {
            return .rejected(code: "INVALID", reason: problems.map(\.description).joined(separator: "; "))
        }
        switch change {
        case .deletion(let deletion):
            guard let state = try batch.lookup(deletion.id), !state.isDeleted else { return .absent }
            return outcome(try batch.apply(RecordOperation.delete(deletion)), success: .deleted)
        case .record(let record):
            return try apply(record, encoded: prepared.encoded)
        }
    }

    /// Writes a record; its system fields, if it has any, are the target's to assign (every write leaves them out).
    private func apply(_ record: Record, encoded known: RecordContent?) throws -> TransferOutcome {
        if try batch.createZone(record.zoneID) { zonesCreated += 1 }
        for field in record.fields {
            for asset in field.value.assets where try !batch.hasAsset(asset) {
                guard try source.canSupply(asset) else {
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
        let encoded = known ?? RecordContent(record)
        guard let existing else { return try writeBreakingCycles(record, encoded: encoded, success: .created) }
        if existing.isDeleted {
            switch options.policy {
            case .clientWins: return try writeBreakingCycles(record, encoded: encoded, success: .created)
            case .fail: return .rejected(code: "CONFLICT", reason: "the target deleted this record")
            case .serverWins, .newer: return .kept(reason: "the target deleted this record; deletes win")
            }
        }
        if existing.contentDigest == encoded.digest { return .unchanged }
        switch options.policy {
        case .clientWins:
            return try writeBreakingCycles(record, encoded: encoded, success: .updated)
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
            return try writeBreakingCycles(record, encoded: encoded, success: .updated)
        }
    }

    /// Writes a record; when a VALIDATE reference points at a record not written yet (a reference cycle, or a child
    /// before its parent), writes it without those references first and defers the whole record to the run's end.
    private func writeBreakingCycles(_ record: Record, encoded: RecordContent, success: TransferOutcome) throws
        -> TransferOutcome
    {
        guard let failure = try batch.forceReplace(record, encoded: encoded) else { return success }
        guard case .failed(_, .validatingReferenceError, _, _) = failure, let run else { return outcome(failure, success: success) }
        var trimmed = record
        for field in record.fields where field.value.references.contains(where: { $0.action == .validate }) {
            trimmed.fields[field.name] = nil
        }
        let retried = try batch.apply(RecordOperation(.forceReplace, trimmed))
        guard case .saved = retried else { return outcome(failure, success: success) }
        try batch.deferRecord(record, run: run)
        deferred += 1
        return success
    }

    private func outcome(_ result: RecordOutcome, success: TransferOutcome) -> TransferOutcome {
        if case .failed(_, let code, let reason, _) = result { return .rejected(code: code.rawValue, reason: reason) }
        return success
    }
}
