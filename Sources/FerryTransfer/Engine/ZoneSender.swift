import FerryBackend
import FerryCore
import FerryRecords
import Foundation
import Synchronization

/// Sends one zone's changes of a copy round to the target: lookups, the policy's decisions, missing assets, the
/// modify requests in the source's order, retries of throttled operations and the deferral of VALIDATE cycles.
struct ZoneSender: Sendable {
    let target: any RecordStore
    let journal: any CheckpointJournal
    let assets: SourceAssets
    let options: RecordCopier.Options
    let run: String

    /// A zone's changes of a round made ready ahead of their turn, phase by phase (see ``stage(_:changes:contents:)``).
    struct StagedRequest: Sendable {
        var request: CopyState.ZoneRequest
        var phases: [StagedPhase]
    }

    /// Changes of a zone that name each record once, made ready ahead of their turn.
    struct StagedPhase: Sendable {
        var indices: [Int]
        /// Their bulk write without lookups, when the zone was empty when the copy began and the target writes in bulk.
        var creation: BulkCreation?
        /// The writes of ``creation``, with the outcomes they give.
        var writes: [PendingWrite] = []
        /// The assets stored while staging.
        var assets = AssetCounts()
    }

    /// Does for a zone's changes what needs no turn: cuts them into phases and, for a zone that was empty when the
    /// copy began, stores the assets of each phase and prepares its bulk write.
    ///
    /// A copy stages a round while the round before it is being written; nothing here depends on what that round
    /// writes (assets are stored by their content, whoever comes first).
    func stage(_ request: CopyState.ZoneRequest, changes: [SourceChange], contents: [RecordContent?]) async throws -> StagedRequest {
        var staged = StagedRequest(request: request, phases: [])
        for phase in Self.phases(request.indices, changes: changes) {
            var next = StagedPhase(indices: phase)
            if request.fresh, let bulk = target as? any BulkCreating {
                next = try await stageUnlooked(phase, zone: request.zone, changes: changes, contents: contents, bulk)
            }
            staged.phases.append(next)
        }
        return staged
    }

    /// Sends a zone's staged changes, phase by phase: each looked up after the one before was written, so that a
    /// record's second change meets its first (as it would one change at a time); the outcomes by index into
    /// `changes`, the assets stored, and whether `checkpoint` was recorded.
    ///
    /// `checkpoint`, given when these are the last changes of a round, goes with the last phase's bulk write when the
    /// target is the copy's journal too (``CheckpointedBulkCreating``) and saves every record of it; else the caller
    /// records it.
    func send(_ staged: StagedRequest, changes: [SourceChange], contents: [RecordContent?], checkpoint: CopyState.Checkpoint? = nil)
        async throws -> (outcomes: [(Int, TransferOutcome)], assets: AssetCounts, recorded: Bool)
    {
        var decided: [(Int, TransferOutcome)] = []
        var stored = AssetCounts()
        var recorded = false
        for (number, phase) in staged.phases.enumerated() {
            // Assets stored for a bulk write the target refused count with the ones the looked-up way stores.
            stored.add(phase.assets)
            if let creation = phase.creation, let bulk = target as? any BulkCreating {
                // Each record's outcome, `nil` for a record saved.
                var outcomes: [RecordOutcome?]?
                if number == staged.phases.count - 1, let checkpoint, let journaled = checkpoint.journaledTarget(target) {
                    let written = try await journaled.createAbsent(
                        creation, recording: CopyCheckpoint(done: checkpoint.done, finished: false), run: checkpoint.run,
                        source: checkpoint.source)
                    outcomes = written?.refusals
                    recorded = written?.recorded ?? false
                } else {
                    outcomes = try await bulk.createAbsent(creation)?.map(Optional.some)
                }
                if let outcomes {
                    decided += try await settle(phase.writes, outcomes, in: staged.request.zone)
                    continue
                }
            }
            let (outcomes, assets) = try await sendLookedUp(
                CopyState.ZoneRequest(zone: staged.request.zone, indices: phase.indices, fresh: staged.request.fresh), changes: changes,
                contents: contents)
            decided += outcomes
            stored.add(assets)
        }
        return (decided, stored, recorded)
    }

    /// The changes of a zone cut before each name already seen since the last cut.
    static func phases(_ indices: [Int], changes: [SourceChange]) -> [[Int]] {
        var phases: [[Int]] = []
        // Where the current phase starts among `indices`: phases are slices of it, made when cut.
        var start = 0
        // Room for every name at once: a set grown from empty rehashed every name a dozen times over.
        var names = Set<String>(minimumCapacity: indices.count)
        // Names read where the changes lie: `changes[index].change` copied each change whole.
        changes.withUnsafeBufferPointer { changes in
            for (position, index) in indices.enumerated() {
                let name = changes[index].change.recordName
                if !names.insert(name).inserted {
                    phases.append(Array(indices[start..<position]))
                    start = position
                    names.removeAll(keepingCapacity: true)
                    names.insert(name)
                }
            }
        }
        if start < indices.count { phases.append(start == 0 ? indices : Array(indices[start...])) }
        return phases
    }

    /// Sends changes of one zone that name each record once, looking them up first.
    private func sendLookedUp(_ request: CopyState.ZoneRequest, changes: [SourceChange], contents: [RecordContent?]) async throws
        -> ([(Int, TransferOutcome)], AssetCounts)
    {
        var stored = AssetCounts()
        let limit = max(1, target.capabilities.maxOperationsPerRequest)
        // Records the target holds with the same content are unchanged, whatever the policy: a target that compares
        // digests itself says which they are, and only the others are looked up.
        let unchanged = try await unchangedRecords(request.indices, changes: changes, contents: contents)
        let ids = request.indices.filter { !unchanged.contains($0) }.map { changes[$0].change.id }
        var versions: [RecordID: RecordVersion] = [:]
        for start in stride(from: 0, to: ids.count, by: limit) {
            versions.merge(try await target.lookup(Array(ids[start..<min(start + limit, ids.count)])), uniquingKeysWith: { $1 })
        }
        var fetched: [RecordID: Record] = [:]
        if case .newer = options.policy {
            let differing = request.indices.filter { index in
                guard let version = versions[changes[index].change.id], !version.isDeleted else { return false }
                return version.contentDigest != contents[index]?.digest
            }.map { changes[$0].change.id }
            for start in stride(from: 0, to: differing.count, by: limit) {
                fetched.merge(try await target.fetch(Array(differing[start..<min(start + limit, differing.count)])), uniquingKeysWith: { $1 })
            }
        }
        var decided: [(Int, TransferOutcome)] = []
        // The writes, in order, with the outcome each gives when it succeeds.
        var writes: [PendingWrite] = []
        // The records the target lacks altogether, which a bulk-creating backend takes faster than by modify requests.
        var absent: Set<Int> = []
        for index in request.indices {
            if unchanged.contains(index) {
                decided.append((index, .unchanged))
                continue
            }
            switch changes[index].change {
            case .deletion(let deletion):
                guard let version = versions[deletion.id], !version.isDeleted else {
                    decided.append((index, .absent))
                    continue
                }
                writes.append(PendingWrite(index: index, operation: RecordOperation.delete(deletion), success: .deleted))
            case .record(let record):
                let version = versions[record.id]
                let decision = Decision.decide(
                    record: record, digest: contents[index]?.digest, live: version.map { !$0.isDeleted } ?? false,
                    deleted: version?.isDeleted ?? false,
                    targetDigest: version?.contentDigest, targetTag: version?.changeTag, target: fetched[record.id], policy: options.policy)
                switch decision {
                case .done(let outcome): decided.append((index, outcome))
                case .write(let success):
                    var bare = record
                    bare.system = nil
                    writes.append(PendingWrite(index: index, operation: RecordOperation(.forceReplace, bare), success: success))
                    if version == nil && contents[index] != nil { absent.insert(index) }
                }
            }
        }
        let (refused, assets) = try await storeAssets(of: writes.compactMap { $0.operation.kind.isDeletion ? nil : $0.operation.record })
        stored.add(assets)
        if !refused.isEmpty {
            writes.removeAll { write in
                guard let reason = refused[write.operation.record.id] else { return false }
                decided.append((write.index, .rejected(code: "MISSING_ASSET", reason: reason)))
                return true
            }
        }
        for group in requests(writes, absent: absent, limit: limit) {
            var outcomes: [RecordOutcome]?
            if let bulk = target as? any BulkCreating, group.allSatisfy({ absent.contains($0.index) }) {
                outcomes = try await bulk.createAbsent(
                    group.map(\.operation.record), contents: group.compactMap { contents[$0.index] }, in: request.zone)
            }
            if outcomes == nil {
                // Not bulk, or another writer created one of the records since the lookup: request by request.
                outcomes = try await Self.modifyRetrying(target: target, group.map(\.operation), in: request.zone, retries: options.retries)
            }
            decided += try await settle(group, outcomes ?? [], in: request.zone)
        }
        return (decided, stored)
    }

    /// The records among `indices` that a ``DigestMatching`` target holds live with the same content (none for other
    /// targets).
    private func unchangedRecords(_ indices: [Int], changes: [SourceChange], contents: [RecordContent?]) async throws -> Set<Int> {
        guard let matching = target as? any DigestMatching else { return [] }
        var candidates: [Int] = []
        var digests: [SHA256Digest] = []
        for index in indices where !changes[index].change.isDeletion {
            guard let digest = contents[index]?.digest else { continue }
            candidates.append(index)
            digests.append(digest)
        }
        guard !candidates.isEmpty else { return [] }
        let differing = Set(try await matching.differing(candidates.map { changes[$0].change.id }, digests: digests))
        return Set(candidates.indices.filter { !differing.contains($0) }.map { candidates[$0] })
    }

    /// Prepares the bulk write of records into a zone that was empty when the copy began, without looking them up,
    /// and stores their assets.
    ///
    /// A bulk-creating target refuses the lot when it holds one of them (a name the copy wrote before, a deleted
    /// record), and then they go the looked-up way. There is no bulk write when they must go that way anyway (a
    /// deletion among them, a record not encoded, an asset missing); the assets stored count either way.
    private func stageUnlooked(
        _ indices: [Int], zone: ZoneID, changes: [SourceChange], contents: [RecordContent?], _ bulk: any BulkCreating
    ) async throws -> StagedPhase {
        var phase = StagedPhase(indices: indices)
        var records: [Record] = []
        var encoded: [RecordContent] = []
        records.reserveCapacity(indices.count)
        encoded.reserveCapacity(indices.count)
        phase.writes.reserveCapacity(indices.count)
        for index in indices {
            guard case .record(var record) = changes[index].change, let content = contents[index] else { return StagedPhase(indices: indices) }
            record.system = nil
            records.append(record)
            encoded.append(content)
            phase.writes.append(PendingWrite(index: index, operation: RecordOperation(.forceReplace, record), success: .created))
        }
        let refused: [RecordID: String]
        (refused, phase.assets) = try await storeAssets(of: records)
        guard refused.isEmpty else { return StagedPhase(indices: indices, assets: phase.assets) }
        phase.creation = try await bulk.prepareCreation(records, contents: encoded, in: zone)
        return phase
    }

    /// The outcomes of a request's writes as the copy reports them; records refused for a VALIDATE reference to a
    /// record not there (yet) are written without it now and whole at the end (a reference cycle, or a child before its
    /// parent).
    private func settle(_ group: [PendingWrite], _ outcomes: [RecordOutcome?], in zone: ZoneID) async throws -> [(Int, TransferOutcome)] {
        var decided: [(Int, TransferOutcome)] = []
        decided.reserveCapacity(group.count)
        var trimmed: [(index: Int, record: Record, trimmed: Record, success: TransferOutcome, failure: String)] = []
        // The writes read where they lie: a copy of each (its whole record) for its index and outcome was a good part
        // of a round's settling.
        group.withUnsafeBufferPointer { writes in
            for (position, outcome) in zip(writes.indices, outcomes) {
                let (index, success) = (writes[position].index, writes[position].success)
                guard let outcome else {
                    decided.append((index, success))
                    continue
                }
                switch outcome {
                case .saved: decided.append((index, success))
                case .deleted: decided.append((index, .deleted))
                case .failed(_, .notFound, _, _) where writes[position].operation.kind.isDeletion:
                    // Deleted meanwhile by a cascade from an earlier deletion of the same request.
                    decided.append((index, .absent))
                case .failed(_, .validatingReferenceError, let reason, _):
                    let record = writes[position].operation.record
                    var without = record
                    for field in without.fields where field.value.references.contains(where: { $0.action == .validate }) {
                        without.fields[field.name] = nil
                    }
                    trimmed.append((index, record, without, success, reason))
                case .failed(_, let code, let reason, _):
                    decided.append((index, .rejected(code: code.rawValue, reason: reason)))
                }
            }
        }
        guard !trimmed.isEmpty else { return decided }
        let retried = try await Self.modifyRetrying(
            target: target, trimmed.map { RecordOperation(.forceReplace, $0.trimmed) }, in: zone, retries: options.retries)
        for (entry, outcome) in zip(trimmed, retried) {
            if case .saved = outcome {
                try await journal.deferRecord(entry.record, run: run)
                decided.append((entry.index, entry.success))
            } else {
                decided.append((entry.index, .rejected(code: ServerErrorCode.validatingReferenceError.rawValue, reason: entry.failure)))
            }
        }
        return decided
    }

    /// How many assets a round stores at once.
    static let assetWriters = 4

    /// Stores the assets of the records to write that the target lacks, from the source.
    /// - Returns: the records refused for an asset the source cannot supply (with the reason), and what was stored.
    private func storeAssets(of records: [Record]) async throws -> ([RecordID: String], AssetCounts) {
        var wanted: [SHA256Digest: Asset] = [:]
        // Read where they lie: a copy of each record (each of its strings and arrays retained, then released) for the
        // few that hold assets was a good part of staging a round.
        records.withUnsafeBufferPointer { records in
            for index in records.indices { records[index].fields.forEachAsset { _, asset in wanted[asset.sha256] = asset } }
        }
        guard !wanted.isEmpty else { return ([:], AssetCounts()) }
        let missing = try await target.missingAssets(Array(wanted.values))
        var unavailable: [SHA256Digest: Asset] = [:]
        var counts = AssetCounts()
        // A few at once: a target commits each asset on its own, and one at a time kept a round of records with
        // photos waiting for every commit in turn.
        try await withThrowingTaskGroup(of: (Asset, stored: Bool?).self) { group in
            var next = 0
            func start() {
                let (asset, assets, target) = (missing[next], self.assets, self.target)
                next += 1
                group.addTask {
                    guard try await assets.canSupply(asset) else { return (asset, nil) }
                    return (asset, try await assets.put(asset, into: target))
                }
            }
            while next < min(Self.assetWriters, missing.count) { start() }
            for try await (asset, stored) in group {
                switch stored {
                case nil: unavailable[asset.sha256] = asset
                case true?:
                    counts.stored += 1
                    counts.bytes += asset.size
                case false?: break
                }
                if next < missing.count { start() }
            }
        }
        var refused: [RecordID: String] = [:]
        if !unavailable.isEmpty {
            for record in records {
                record.fields.forEachAsset { field, asset in
                    if unavailable[asset.sha256] != nil {
                        refused[record.id] = "\(field): asset \(asset.sha256) (\(asset.size) bytes) is not available"
                    }
                }
            }
        }
        return (refused, counts)
    }

    /// Splits writes (of distinct records) into requests in their order: within the target's limits, except that a run
    /// of records the target lacks goes to a bulk-creating backend whole (up to the round's byte limit).
    private func requests(_ writes: [PendingWrite], absent: Set<Int>, limit: Int) -> [[PendingWrite]] {
        let bytes = target.capabilities.maxRequestBytes
        guard target is any BulkCreating, !absent.isEmpty else { return Self.requests(writes, limit: limit, bytes: bytes) }
        var requests: [[PendingWrite]] = []
        var start = writes.startIndex
        while start < writes.endIndex {
            let bulk = absent.contains(writes[start].index)
            var end = start + 1
            while end < writes.endIndex && absent.contains(writes[end].index) == bulk { end += 1 }
            let run = Array(writes[start..<end])
            requests += bulk ? Self.requests(run, limit: .max, bytes: options.batchBytes) : Self.requests(run, limit: limit, bytes: bytes)
            start = end
        }
        return requests
    }

    /// Splits writes (of distinct records) into requests within the target's limits.
    static func requests(_ writes: [PendingWrite], limit: Int, bytes: Int) -> [[PendingWrite]] {
        var requests: [[PendingWrite]] = []
        var current: [PendingWrite] = []
        var size = 0
        for write in writes {
            let estimate = write.operation.record.estimatedSize + 256
            if !current.isEmpty && (current.count >= limit || size + estimate > bytes) {
                requests.append(current)
                current = []
                size = 0
            }
            current.append(write)
            size += estimate
        }
        if !current.isEmpty { requests.append(current) }
        return requests
    }

    /// Sends a modify request, sending again the operations the backend throttled (after the wait it asked for, or
    /// a doubling backoff), at most `retries` times.
    /// - Throws: ``BackendError`` `throttled` when the retries run out.
    static func modifyRetrying(target: any RecordStore, _ operations: [RecordOperation], in zone: ZoneID, retries: Int) async throws
        -> [RecordOutcome]
    {
        var outcomes = [RecordOutcome?](repeating: nil, count: operations.count)
        var pending = Array(operations.indices)
        var attempt = 0
        while !pending.isEmpty {
            var wait: Duration?
            do {
                let results = try await target.modify(pending.map { operations[$0] }, in: zone, atomic: false)
                var again: [Int] = []
                for (index, outcome) in zip(pending, results) {
                    if let code = outcome.errorCode, code == .throttled || code == .tryAgainLater {
                        again.append(index)
                        wait = max(wait ?? .zero, outcome.retryAfter ?? .zero)
                    } else {
                        outcomes[index] = outcome
                    }
                }
                pending = again
            } catch let error as BackendError where error.code == .throttled {
                wait = error.retryAfter ?? .zero
            }
            guard !pending.isEmpty else { break }
            attempt += 1
            guard attempt <= retries else {
                throw BackendError(
                    .throttled, "\(target.name): still throttled after \(retries) retries; run the same command again later (it resumes)")
            }
            let backoff = Duration.milliseconds(250 << min(attempt, 8))
            try await Task.sleep(for: max(wait ?? .zero, wait == .zero || wait == nil ? backoff : .zero))
        }
        return outcomes.enumerated().map { index, outcome in
            outcome ?? .failed(operations[index].record.id, .internalError, reason: "the backend gave no outcome")
        }
    }
}

/// A write of a request: the change's index in its round, the operation, and its outcome when it succeeds.
struct PendingWrite {
    var index: Int
    var operation: RecordOperation
    var success: TransferOutcome
}

/// A source handed between the copy's tasks; its asset side is reached through ``SourceAssets`` only.
struct UncheckedChangeSource: @unchecked Sendable {
    let base: any ChangeSource
}

/// A source's assets, for the copy's concurrent requests: one request at a time asks the source, and always on a
/// thread of its own, since a source may wait for a backend (``BackendAssetProvider``) and no task of the cooperative
/// pool may block on another.
final class SourceAssets: Sendable {
    private let source: Mutex<UncheckedChangeSource>

    init(_ source: any ChangeSource) { self.source = Mutex(UncheckedChangeSource(base: source)) }

    /// Whether the source can supply the asset; with `now`, from an asset provider while records are read (a
    /// bundle's assets, which follow its records, come through ``ChangeSource/prepare(for:)-(any RecordStore)`` instead).
    func canSupply(_ asset: Asset, now: Bool = true) async throws -> Bool {
        try await AsyncBridge.onThread { [self] in
            try source.withLock { source in try source.base.canSupply(asset) && (!now || source.base.assets != nil) }
        }
    }

    /// Streams an asset from the source into `target`: a thread of its own reads it, 1 MiB at a time, a few pieces
    /// ahead of the target.
    /// - Returns: whether the target stored it (`false`: it had it).
    func put(_ asset: Asset, into target: any RecordStore) async throws -> Bool {
        let channel = PieceChannel()
        let reader = Thread { [self] in
            do {
                guard let provider = source.withLock({ $0.base.assets }) else {
                    throw TransferError(.missingAsset, "asset \(asset.sha256): the source has no assets to read it from")
                }
                let file = try provider.open(asset)
                // One byte more than the asset, so that its one read also finds the end: most are far below 1 MiB.
                var buffer = [UInt8](repeating: 0, count: Int(max(1, min(asset.size + 1, 1 << 20))))
                while true {
                    let filled = try buffer.withUnsafeMutableBytes { try file.read(filling: $0) }
                    if filled > 0 { try channel.push(Array(buffer[..<filled])) }
                    if filled < buffer.count { break }
                }
                try file.finish()
                channel.finish()
            } catch is PieceChannel.Cancelled {
                // The target stopped reading: its error is the copy's.
            } catch {
                channel.finish(throwing: error)
            }
        }
        reader.stackSize = 1 << 20
        reader.start()
        // However the upload ends, the reading thread must not wait for room any more.
        defer { channel.cancel() }
        return try await target.putAsset(asset, bytes: channel.bytes)
    }
}
