import FerryBackend
import FerryCore
import FerryRecords
import Foundation

/// Copies a source's changes into any ``RecordStore``: idempotent, resumable, with a conflict policy.
///
/// The source is read on a thread of its own, a batch at a time. Changes are gathered into rounds of at most
/// ``Options/batchSize`` changes (and the target's request limits); each round is split by zone into requests that
/// keep the source's order (parents first), sent zone by zone, up to ``Options/parallel`` zones at once. Before a
/// request, one lookup tells which records the target holds and with what content, so unchanged records are skipped
/// and the conflict policy decides the rest; assets the target lacks are streamed in first. A record whose VALIDATE
/// reference points at a record not written yet is written without it and completed at the end (a reference cycle).
/// After each round the journal records how many of the source's changes are done: after an interruption the same
/// copy skips them, and the round that was under way is sent again, which changes nothing that it had written.
///
/// A dry run reads everything the real run would and writes nothing: its counts are the real run's, except that it
/// cannot see what deletions would cascade to in the target.
public final class RecordCopier {
    /// Tuning and choices.
    public struct Options: Sendable {
        /// Changes per round (and checkpoint), `nil` for the backend's choice.
        ///
        /// The target's request limits cut requests smaller; the default is 2 000, or 10 000 per transaction for a
        /// local store's bulk path.
        public var batchSize: Int?
        /// Record bytes per round at most, whatever ``batchSize`` says, so large records keep memory bounded.
        public var batchBytes = 16 << 20
        /// Zones whose requests may be in flight at once (`--parallel`); one zone's requests are always sent in order.
        public var parallel = 1
        /// What to do when the target holds another version.
        public var policy = ConflictPolicy.clientWins
        /// Count everything, write nothing.
        public var dryRun = false
        /// Rules records must pass before they are written.
        public var validator = RecordValidator()
        /// How often a request the backend throttles is sent again before the copy gives up.
        public var retries = 5
        /// Whether a copy waits for another copy writing the same zone (a ``ZoneClaiming`` backend) or fails at once.
        public var waitForZones = true
        /// Called when the copy waits for another copy's zone, with what it waits for.
        public var onWaiting: (@Sendable (String) -> Void)?
        /// Where the tally's rows go when there are many (default `$TMPDIR`).
        public var temporaryDirectory: String?
        /// Called after each round, with its changes and how many of the source's changes the checkpoint covers.
        public var onCommit: (@Sendable (_ changes: Int, _ checkpoint: Int64) -> Void)?
        /// Called with how many of the source's changes have been read (for progress).
        public var onRead: (@Sendable (_ changes: Int64) -> Void)?

        /// The defaults.
        public init() {}
    }

    let target: any RecordStore
    let journal: any CheckpointJournal
    let source: any ChangeSource
    let options: Options
    /// The copy's identity in the journal: a digest of the source's fingerprint.
    public let run: String

    /// Prepares a copy of `source` into `target`, journalled in `journal`.
    public init(source: any ChangeSource, target: any RecordStore, journal: any CheckpointJournal, options: Options = Options()) {
        self.source = source
        self.target = target
        self.journal = journal
        self.options = options
        run = SHA256Hasher.digest(Array(source.fingerprint.utf8)).description
    }

    /// The number of changes an earlier interrupted run of this copy completed (0 when there is none).
    public func resumePoint() async throws -> Int64 {
        guard let checkpoint = try await journal.checkpoint(run: run), !checkpoint.finished else { return 0 }
        return checkpoint.done
    }

    /// Runs the copy; `report` receives each change's outcome once its round is done, in the source's order.
    ///
    /// A backend with a bulk path (``BulkCopying``: the local store) takes the whole copy itself.
    public func run(_ report: (inout SourceChange, TransferOutcome) throws -> Void) async throws -> TransferTally {
        if let bulk = target as? any BulkCopying {
            // A bulk path is synchronous and may wait for the source: it runs on a thread of its own, while this task waits.
            let source = self.source
            let options = self.options
            return try await withoutActuallyEscaping(report) { report in
                try await AsyncBridge.handOver { try bulk.bulkCopy(source, options: options, report: report) }
            }
        }
        var state = CopyState(options: options, target: target, journal: journal, source: source, run: run)
        state.tally = TransferTally(temporaryDirectory: options.temporaryDirectory)
        let skip = options.dryRun ? 0 : try await resumePoint()
        // Validation and encoding need no target state: a thread of their own does them between the reading thread and
        // this copy, whose rounds (and the reading thread's mapping) they held up.
        (source as? PipelinedChangeSource)?.prepareWrites(validator: options.validator, onItsOwnThread: true)
        let bulk = options.dryRun ? nil : target as? any BulkCreating
        if let bulk { _ = try await bulk.beginBulkLoad() }
        if !options.dryRun {
            let (target, source) = (self.target, UncheckedChangeSource(base: source))
            let prepared = try await AsyncBridge.onThread { try source.base.prepare(for: target) }
            state.tally.assets += prepared.assets
            state.tally.assetBytes += prepared.bytes
        }
        var pending: [SourceChange] = []
        var pendingBytes = 0
        let batchSize = options.batchSize ?? 2_000
        var position: Int64 = 0
        let batches = ChangeBatches(source)
        // One round is written while the next is read and staged (see ``CopyState/stage(_:done:)``).
        var writer = RoundWriter(sender: state.sender, checkpoint: state.checkpoint)
        do {
            for try await var batch in batches {
                // Changes moved out of the batch, not copied (a copy retained every string of the change, and freeing
                // the batch released them all again): reversed in place, then taken from the end.
                batch.withUnsafeMutableBufferPointer { $0.reverse() }  // Array's own `reverse()` copies as it swaps
                while var change = batch.popLast() {
                    position += 1
                    if position <= skip {
                        try state.tally.count(&change.change, .resumed)
                        try report(&change, .resumed)
                        continue
                    }
                    pendingBytes += change.pendingBytes
                    // Each round takes the array away: room for the next one at once, not by doubling (copying) it.
                    if pending.isEmpty { pending.reserveCapacity(min(batchSize, 8_192)) }
                    pending.append(consume change)
                    if pending.count >= batchSize || pendingBytes >= options.batchBytes {
                        try await state.pipeline(&pending, done: position, writer: &writer, report)
                        pendingBytes = 0
                    }
                }
                options.onRead?(position)
            }
            await batches.finish()
            try await state.pipeline(&pending, done: position, writer: &writer, report)
            if let last = try await writer.finish() { try state.finish(last, report) }
        } catch {
            await batches.finish()
            // A round under way is let finish (its transaction ends either way) before the copy stops; when it was
            // written, its outcomes are reported like the rounds before it (its checkpoint is recorded).
            if let written = try? await writer.finish() { try? state.finish(written, report) }
            throw error
        }
        try await bulk?.endBulkLoad()
        state.tally.patched = try await state.patchDeferred()
        if !options.dryRun {
            try await journal.setCheckpoint(run: run, source: source.description, CopyCheckpoint(done: position, finished: true))
        }
        return state.tally
    }
}

/// What one copy run knows as it goes.
struct CopyState {
    let options: RecordCopier.Options
    let target: any RecordStore
    let journal: any CheckpointJournal
    let source: any ChangeSource
    let run: String
    var tally = TransferTally()
    /// Zones known to exist in the target.
    var zones: Set<ZoneID> = []
    /// Zones that held no live record when the copy began, or that it created.
    var freshZones: Set<ZoneID> = []
    /// Zones this copy has claimed in a ``ZoneClaiming`` target.
    var claimedZones: Set<ZoneID> = []
    var zonesListed = false
    /// A dry run's view of what it would have written: content digests, `nil` for deletions.
    var overlay: [RecordID: SHA256Digest?] = [:]
    /// A dry run's assets counted as new.
    var countedAssets: Set<SHA256Digest> = []
    /// A dry run's records that would have been deferred, with their VALIDATE targets.
    var dryDeferred: [(Record, [RecordID])] = []
    /// The source's assets, asked on threads of their own (one lock for all of the copy's requests).
    let sourceAssets: SourceAssets
    /// What sends a zone's changes to the target.
    let sender: ZoneSender

    init(options: RecordCopier.Options, target: any RecordStore, journal: any CheckpointJournal, source: any ChangeSource, run: String) {
        self.options = options
        self.target = target
        self.journal = journal
        self.source = source
        self.run = run
        sourceAssets = SourceAssets(source)
        sender = ZoneSender(target: target, journal: journal, assets: sourceAssets, options: options, run: run)
    }

    /// A round of changes made ready to be written: validated, encoded, split by zone, staged.
    struct StagedRound: Sendable {
        var changes: [SourceChange]
        /// How many of the source's changes the round's checkpoint covers.
        var done: Int64
        /// Outcomes decided before writing (records refused by validation).
        var outcomes: [TransferOutcome?]
        var contents: [RecordContent?]
        var requests: [ZoneSender.StagedRequest]
    }

    /// A round written: its changes, their outcomes, the assets stored.
    struct WrittenRound: Sendable {
        var changes: [SourceChange]
        var done: Int64
        var outcomes: [TransferOutcome?]
        var assets: AssetCounts
    }

    /// Counts what a round of changes would do without writing it, and reports the outcomes in order.
    private mutating func dryRound(_ pending: inout [SourceChange], done: Int64, _ report: (inout SourceChange, TransferOutcome) throws -> Void)
        async throws
    {
        guard let staged = try await stage(&pending, done: done) else { return }
        var outcomes = staged.outcomes
        for request in staged.requests {
            for (index, outcome) in try await dryRun(request.request, changes: staged.changes, contents: staged.contents) {
                outcomes[index] = outcome
            }
        }
        try finish(WrittenRound(changes: staged.changes, done: done, outcomes: outcomes, assets: AssetCounts()), report)
    }

    /// Stages a round while the round before it is written, hands it to `writer`, which starts it as soon as that
    /// one is done, and reports the one before.
    ///
    /// The target sees the same requests in the same order as round by round; what overlaps is the copy's own work
    /// on the next round (reading, encoding, checks, assets) with the target's on the last. A dry run goes round by
    /// round.
    mutating func pipeline(
        _ pending: inout [SourceChange], done: Int64, writer: inout RoundWriter, _ report: (inout SourceChange, TransferOutcome) throws -> Void
    ) async throws {
        if options.dryRun { return try await dryRound(&pending, done: done, report) }
        guard let staged = try await stage(&pending, done: done) else { return }
        if let previous = try await writer.start(staged) { try finish(previous, report) }
    }

    /// Makes a round ready to be written, `nil` for an empty round.
    ///
    /// Validation and encoding (done ahead by the source's preparing thread), zones created and claimed, each
    /// zone's changes staged (``ZoneSender/stage(_:changes:contents:)``).
    mutating func stage(_ pending: inout [SourceChange], done: Int64) async throws -> StagedRound? {
        guard !pending.isEmpty else { return nil }
        var changes: [SourceChange] = []
        swap(&changes, &pending)
        var outcomes = [TransferOutcome?](repeating: nil, count: changes.count)
        var contents: [RecordContent?] = Array(repeating: nil, count: changes.count)
        // Checks needing no target state: validation, and the content digest every comparison uses.
        var accepted: [Int] = []
        accepted.reserveCapacity(changes.count)
        for index in changes.indices {
            // Prepared ahead by the source's preparing thread (with its warnings added), else here. Taken out of
            // the change (nothing reads it after), not copied.
            let write: PreparedWrite
            if let prepared = changes[index].prepared.take() {
                write = prepared
            } else {
                write = changes[index].preparedWrite(validator: options.validator)
            }
            if !write.errors.isEmpty {
                outcomes[index] = .rejected(code: "INVALID", reason: write.errors.map(\.description).joined(separator: "; "))
                continue
            }
            contents[index] = write.encoded
            accepted.append(index)
        }
        // Zones read where the changes lie: `changes[$0].change` copied each change whole (every string retained).
        let byZone = changes.withUnsafeBufferPointer { changes in accepted.groupedInRuns { changes[$0].change.zoneID } }
        try await ensureZones(byZone, changes: changes)
        var requests: [ZoneSender.StagedRequest] = []
        for (zone, indices) in byZone {
            let request = ZoneRequest(zone: zone, indices: indices, fresh: freshZones.contains(zone))
            requests.append(
                options.dryRun
                    ? ZoneSender.StagedRequest(request: request, phases: [])
                    : try await sender.stage(request, changes: changes, contents: contents))
        }
        return StagedRound(changes: changes, done: done, outcomes: outcomes, contents: contents, requests: requests)
    }

    /// A round's checkpoint: where a copy records how far it got, and how many of the source's changes are done once
    /// the round is written.
    struct Checkpoint: Sendable {
        let journal: any CheckpointJournal
        let run: String
        let source: String
        var done: Int64 = 0

        /// Records the checkpoint on its own.
        func record() async throws {
            try await journal.setCheckpoint(run: run, source: source, CopyCheckpoint(done: done, finished: false))
        }

        /// The target, when it is this journal and records checkpoints with its bulk writes.
        func journaledTarget(_ target: any RecordStore) -> (any CheckpointedBulkCreating)? {
            guard let journaled = target as? any CheckpointedBulkCreating, (journaled as AnyObject) === (journal as AnyObject) else { return nil }
            return journaled
        }
    }

    var checkpoint: Checkpoint { Checkpoint(journal: journal, run: run, source: source.description) }

    /// Writes a staged round: zone by zone, or up to the sender's `parallel` zones at once, each zone's requests in
    /// order; then records its checkpoint, unless the round's one zone recorded it with its last write.
    static func write(_ round: StagedRound, sender: ZoneSender, checkpoint: Checkpoint) async throws -> WrittenRound {
        var checkpoint = checkpoint
        checkpoint.done = round.done
        let (written, recorded) = try await send(round, sender: sender, checkpoint: checkpoint)
        if !recorded { try await checkpoint.record() }
        return written
    }

    private static func send(_ round: StagedRound, sender: ZoneSender, checkpoint: Checkpoint) async throws -> (WrittenRound, recorded: Bool) {
        var written = WrittenRound(changes: round.changes, done: round.done, outcomes: round.outcomes, assets: AssetCounts())
        var recorded = false
        // A round of one zone is written by one request, whose last write may carry the round's checkpoint.
        let carried = round.requests.count == 1 ? checkpoint : nil
        let parallel = max(1, sender.options.parallel)
        try await withThrowingTaskGroup(of: (outcomes: [(Int, TransferOutcome)], assets: AssetCounts, recorded: Bool).self) { group in
            var next = 0
            func start() {
                let request = round.requests[next]
                next += 1
                group.addTask { try await sender.send(request, changes: round.changes, contents: round.contents, checkpoint: carried) }
            }
            while next < min(parallel, round.requests.count) { start() }
            for try await sent in group {
                for (index, outcome) in sent.outcomes { written.outcomes[index] = outcome }
                written.assets.add(sent.assets)
                recorded = recorded || sent.recorded
                if next < round.requests.count { start() }
            }
        }
        return (written, recorded)
    }

    /// Reports a written round's outcomes in the source's order (its checkpoint was recorded by ``write(_:sender:checkpoint:)``).
    mutating func finish(_ round: consuming WrittenRound, _ report: (inout SourceChange, TransferOutcome) throws -> Void) throws {
        // Taken out of the round, so the reports below change the array in place instead of copying it first.
        var changes: [SourceChange] = []
        swap(&changes, &round.changes)
        tally.assets += round.assets.stored
        tally.assetBytes += round.assets.bytes
        options.onCommit?(changes.count, round.done)
        for index in changes.indices {
            let outcome = round.outcomes[index] ?? .rejected(code: "INTERNAL_ERROR", reason: "no outcome")
            try tally.count(&changes[index].change, outcome)
            try report(&changes[index], outcome)
        }
        (source as? PipelinedChangeSource)?.recycle(changes)
    }

    /// Creates the zones the round writes that the target lacks (for records; a deletion needs no zone); `byZone` is the
    /// round's changes (their indices in `changes`) by zone, in the round's order.
    private mutating func ensureZones(_ byZone: [(key: ZoneID, elements: [Int])], changes: [SourceChange]) async throws {
        if !zonesListed {
            let listed = try await target.zoneOccupancy()
            zones = Set(listed.keys)
            freshZones = Set(listed.filter { !$0.value }.keys)
            zonesListed = true
        }
        for (zone, indices) in byZone where !zones.contains(zone) {
            guard indices.contains(where: { !changes[$0].change.isDeletion }) else { continue }
            let created = options.dryRun ? true : try await target.createZone(zone)
            if created { tally.zonesCreated += 1 }
            zones.insert(zone)
            freshZones.insert(zone)
        }
        // Claimed before the first write (and only by copies that write): a zone the copy only deletes from is
        // claimed too, a zone the target lacks is not written.
        guard !options.dryRun, let claiming = target as? any ZoneClaiming else { return }
        for zone in byZone.map(\.key) where zones.contains(zone) && !claimedZones.contains(zone) {
            let onWaiting = options.onWaiting
            try await claiming.claimZone(zone, wait: options.waitForZones) { message in onWaiting?(message) }
            claimedZones.insert(zone)
        }
    }

    /// One zone's changes of a round.
    struct ZoneRequest: Sendable {
        var zone: ZoneID
        var indices: [Int]
        /// Whether the zone held no record when the copy began (so its records are likely absent from it).
        var fresh = false
    }

    /// What a zone's changes would do, decided from lookups and the run's own would-be writes, without writing: the
    /// same phases and requests as ``ZoneSender`` sends, so VALIDATE references meet the same records.
    private mutating func dryRun(_ request: ZoneRequest, changes: [SourceChange], contents: [RecordContent?]) async throws
        -> [(Int, TransferOutcome)]
    {
        var decided: [(Int, TransferOutcome)] = []
        for phase in ZoneSender.phases(request.indices, changes: changes) {
            decided += try await dryRunPhase(phase, changes: changes, contents: contents)
        }
        return decided
    }

    private mutating func dryRunPhase(_ indices: [Int], changes: [SourceChange], contents: [RecordContent?]) async throws
        -> [(Int, TransferOutcome)]
    {
        let ids = indices.map { changes[$0].change.id }
        var references: Set<RecordID> = []
        var assets: [SHA256Digest: Asset] = [:]
        for index in indices {
            guard case .record(let record) = changes[index].change else { continue }
            references.formUnion(record.validateTargets)
            for field in record.fields {
                for asset in field.value.assets where !countedAssets.contains(asset.sha256) { assets[asset.sha256] = asset }
            }
        }
        let versions = try await target.lookup(ids + references.filter { overlay[$0] == nil })
        let missingAssets = Set(try await target.missingAssets(Array(assets.values)).map(\.sha256))
        var fetched: [RecordID: Record] = [:]
        if case .newer = options.policy { fetched = try await target.fetch(ids) }
        let before = overlay
        func version(_ id: RecordID) -> (live: Bool, digest: SHA256Digest?, known: Bool, tag: String?) {
            if let written = before[id] { return (written != nil, written ?? nil, true, nil) }
            guard let found = versions[id] else { return (false, nil, false, nil) }
            return (!found.isDeleted, found.contentDigest, true, found.changeTag)
        }
        var decided: [(Int, TransferOutcome)] = []
        var writes: [PendingWrite] = []
        for index in indices {
            switch changes[index].change {
            case .deletion(let deletion):
                if version(deletion.id).live {
                    writes.append(PendingWrite(index: index, operation: RecordOperation.delete(deletion), success: .deleted))
                } else {
                    decided.append((index, .absent))
                }
            case .record(let record):
                let current = version(record.id)
                let decision = Decision.decide(
                    record: record, digest: contents[index]?.digest, live: current.live, deleted: current.known && !current.live,
                    targetDigest: current.digest, targetTag: current.tag, target: fetched[record.id], policy: options.policy)
                switch decision {
                case .write(let success):
                    if let refusal = try await countAssets(of: record, missing: missingAssets) {
                        decided.append((index, refusal))
                    } else {
                        writes.append(PendingWrite(index: index, operation: RecordOperation(.forceReplace, record), success: success))
                    }
                case .done(let outcome):
                    decided.append((index, outcome))
                }
            }
        }
        let capabilities = target.capabilities
        for group in ZoneSender.requests(writes, limit: max(1, capabilities.maxOperationsPerRequest), bytes: capabilities.maxRequestBytes) {
            // A record whose VALIDATE target is not live when its request reaches it is written without the reference
            // after the request, and whole at the end.
            var trimmed: [PendingWrite] = []
            for write in group {
                let id = write.operation.record.id
                if write.operation.kind.isDeletion {
                    overlay[id] = .some(nil)
                } else if write.operation.record.validateTargets.contains(where: { !isLive($0, versions: versions) }) {
                    trimmed.append(write)
                    continue
                } else {
                    overlay[id] = contents[write.index]?.digest
                }
                decided.append((write.index, write.success))
            }
            for write in trimmed {
                overlay[write.operation.record.id] = contents[write.index]?.digest
                dryDeferred.append((write.operation.record, write.operation.record.validateTargets))
                decided.append((write.index, write.success))
            }
        }
        return decided
    }

    /// Whether a record is live in a dry run's view: written or deleted by the run, else as the target holds it.
    private func isLive(_ id: RecordID, versions: [RecordID: RecordVersion]) -> Bool {
        if let written = overlay[id] { return written != nil }
        return versions[id].map { !$0.isDeleted } ?? false
    }

    /// A dry run's count of the assets a record would store: `nil` when each is in the target or comes from the
    /// source, else the record's refusal.
    private mutating func countAssets(of record: Record, missing: Set<SHA256Digest>) async throws -> TransferOutcome? {
        var new: [Asset] = []
        for field in record.fields {
            for asset in field.value.assets where missing.contains(asset.sha256) && !countedAssets.contains(asset.sha256) {
                guard try await sourceAssets.canSupply(asset, now: false) else {
                    return .rejected(code: "MISSING_ASSET", reason: "\(field.name): asset \(asset.sha256) (\(asset.size) bytes) is not available")
                }
                new.append(asset)
            }
        }
        for asset in new where countedAssets.insert(asset.sha256).inserted {
            tally.assets += 1
            tally.assetBytes += asset.size
        }
        return nil
    }

    /// Writes whole the records that went in without a VALIDATE reference (their targets exist now), or, in a dry
    /// run, tells which would be.
    mutating func patchDeferred() async throws -> [(record: Record, outcome: TransferOutcome)] {
        if options.dryRun {
            var patched: [(record: Record, outcome: TransferOutcome)] = []
            for (record, targets) in dryDeferred {
                let versions = try await target.lookup(targets.filter { overlay[$0] == nil })
                let missing = targets.filter { id in overlay[id].map { $0 == nil } ?? (versions[id].map(\.isDeleted) ?? true) }
                patched.append(
                    (
                        record,
                        missing.isEmpty
                            ? .updated
                            : .rejected(
                                code: ServerErrorCode.validatingReferenceError.rawValue,
                                reason: "written without its VALIDATE references: \(missing.map(\.recordName).joined(separator: ", ")) never came")
                    ))
            }
            return patched
        }
        let deferred = try await journal.takeDeferred(run: run)
        var patched: [(record: Record, outcome: TransferOutcome)] = []
        for (zone, records) in deferred.groupedInRuns(by: \.zoneID) {
            let limit = max(1, target.capabilities.maxOperationsPerRequest)
            for start in stride(from: 0, to: records.count, by: limit) {
                let slice = Array(records[start..<min(start + limit, records.count)])
                let outcomes = try await ZoneSender.modifyRetrying(
                    target: target, slice.map { RecordOperation(.forceReplace, $0) }, in: zone, retries: options.retries)
                for (record, outcome) in zip(slice, outcomes) {
                    if case .failed(_, let code, let reason, _) = outcome {
                        patched.append((record, .rejected(code: code.rawValue, reason: "written without its VALIDATE references: \(reason)")))
                    } else {
                        patched.append((record, .updated))
                    }
                }
            }
        }
        return patched
    }
}

/// Assets a request stored.
struct AssetCounts: Sendable {
    var stored = 0
    var bytes: Int64 = 0

    mutating func add(_ other: AssetCounts) {
        stored += other.stored
        bytes += other.bytes
    }
}

/// What the conflict policy makes of one record, given what the target holds.
enum Decision {
    /// Write it; the outcome when the write succeeds.
    case write(TransferOutcome)
    /// Nothing to write: the outcome.
    case done(TransferOutcome)

    static func decide(
        record: Record, digest: SHA256Digest?, live: Bool, deleted: Bool, targetDigest: SHA256Digest?, targetTag: String?, target: Record?,
        policy: ConflictPolicy
    ) -> Decision {
        if !live && !deleted { return .write(.created) }
        if deleted {
            switch policy {
            case .clientWins: return .write(.created)
            case .fail: return .done(.rejected(code: "CONFLICT", reason: "the target deleted this record"))
            case .serverWins, .newer: return .done(.kept(reason: "the target deleted this record; deletes win"))
            }
        }
        if let digest, digest == targetDigest { return .done(.unchanged) }
        switch policy {
        case .clientWins:
            return .write(.updated)
        case .serverWins:
            return .done(.kept(reason: "the target holds another version (server-wins)"))
        case .fail:
            return .done(.rejected(code: "CONFLICT", reason: "the target holds another version (change tag \(targetTag ?? "unknown"))"))
        case .newer(let field):
            guard case .timestamp(let mine)? = record.fields[field] else {
                return .done(.kept(reason: "the source's record has no TIMESTAMP \(field) to compare"))
            }
            if case .timestamp(let theirs)? = target?.fields[field], theirs >= mine {
                return .done(.kept(reason: "the target's \(field) is as new or newer"))
            }
            return .write(.updated)
        }
    }
}

extension Record {
    /// The records this one's VALIDATE references point at.
    var validateTargets: [RecordID] {
        var targets: [RecordID] = []
        for field in fields {
            for reference in field.value.references where reference.action == .validate { targets.append(reference.target) }
        }
        return targets
    }
}

/// A backend that takes a whole copy faster than request by request.
///
/// The local store does (one transaction per batch with its checkpoint, indexes built at the end of a first copy,
/// records encoded on the reading thread). The copy engine hands such a backend the copy; its outcomes, counts and
/// resume points are those of the engine's own path.
public protocol BulkCopying: RecordStore {
    /// Runs the copy of `source` into this backend.
    func bulkCopy(
        _ source: any ChangeSource, options: RecordCopier.Options, report: (inout SourceChange, TransferOutcome) throws -> Void
    ) throws -> TransferTally
}
