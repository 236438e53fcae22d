import FerryCore
import FerryRecords
import Foundation
import Synchronization

/// The reference ``RecordStore``: CloudKit's semantics, held in memory, written to be read.
///
/// It is what the conformance suite is checked against first and what unit tests of the transfer engine write into;
/// it stands in for no real backend in the product (nothing it holds outlives the process). The rules, in order:
///
/// - A zone must exist before records go into it (ZONE_NOT_FOUND); the default zone always exists and cannot be
///   deleted; atomic requests are refused in it (BAD_REQUEST), as CloudKit does.
/// - Every write gives the record a new change tag (its zone's next change sequence, base 36), keeps `created` and
///   sets `modified`; the record's content digest is ``RecordContent``'s.
/// - `create` fails with EXISTS over a live record; `update`, `replace` and `delete` need the current change tag
///   (BAD_REQUEST without one, NOT_FOUND without a record, CONFLICT when it is not current); `forceUpdate` and
///   `forceReplace` create a missing record; `forceDelete` of a missing record is NOT_FOUND. `update` changes only the
///   fields it lists.
/// - A reference into another zone is BAD_REQUEST; a VALIDATE reference to a record that is not live is
///   VALIDATING_REFERENCE_ERROR. Two operations on one record in a request: the second is BAD_REQUEST.
/// - Deleting a record leaves a tombstone and deletes, transitively, the live records of its zone that point at it
///   with DELETE_SELF, each leaving its own tombstone.
/// - The change feed gives each record changed since the token once, in the order of its last change, tombstones
///   included; a token of another zone is refused.
/// - Assets are stored once per SHA-256, after their bytes were checked against it.
public final class InMemoryRecordStore: RecordStore, CheckpointJournal {
    public let name: String
    public let capabilities: BackendCapabilities
    /// Milliseconds since 1970 for created/modified times.
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())

    /// An empty store, holding only the default zone.
    public init(
        name: String = "memory", maxOperationsPerRequest: Int = 400, maxRequestBytes: Int = 4 << 20,
        clock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
    ) {
        self.name = name
        self.clock = clock
        capabilities = BackendCapabilities(
            atomicZones: true, changeFeed: true, reportsTombstones: true, maxOperationsPerRequest: maxOperationsPerRequest,
            maxRequestBytes: maxRequestBytes)
    }

    struct Stored {
        var recordType: String
        var changeTag: String
        var sequence: Int64
        var created: Int64
        var modified: Int64
        /// `nil` for a tombstone.
        var record: Record?
        var digest: SHA256Digest?
    }

    struct Zone {
        var number: Int64
        var lastSequence: Int64 = 0
        var records: [String: Stored] = [:]
    }

    struct State {
        var zones: [ZoneID: Zone] = [.default: Zone(number: 1)]
        var nextZoneNumber: Int64 = 2
        var assets: [SHA256Digest: [UInt8]] = [:]
        var checkpoints: [String: CopyCheckpoint] = [:]
        var deferred: [String: [Record]] = [:]
    }

    // MARK: Zones

    public func zones() async throws -> [ZoneSummary] {
        state.withLock { state in
            state.zones.sorted { ($0.key != .default ? 1 : 0, $0.key) < ($1.key != .default ? 1 : 0, $1.key) }.map { id, zone in
                ZoneSummary(
                    zoneID: id, syncToken: Self.token(zone: zone.number, sequence: zone.lastSequence),
                    recordCount: zone.records.values.count { $0.record != nil })
            }
        }
    }

    public func createZone(_ zone: ZoneID) async throws -> Bool {
        state.withLock { state in
            guard state.zones[zone] == nil else { return false }
            state.zones[zone] = Zone(number: state.nextZoneNumber)
            state.nextZoneNumber += 1
            return true
        }
    }

    public func deleteZone(_ zone: ZoneID) async throws -> Bool {
        state.withLock { state in
            guard zone != .default, state.zones[zone] != nil else { return false }
            state.zones[zone] = nil
            return true
        }
    }

    // MARK: Records

    public func lookup(_ ids: [RecordID]) async throws -> [RecordID: RecordVersion] {
        state.withLock { state in
            var found: [RecordID: RecordVersion] = [:]
            for id in ids {
                guard let stored = state.zones[id.zoneID]?.records[id.recordName] else { continue }
                found[id] = RecordVersion(
                    recordType: stored.recordType, changeTag: stored.changeTag, isDeleted: stored.record == nil, contentDigest: stored.digest)
            }
            return found
        }
    }

    public func fetch(_ ids: [RecordID]) async throws -> [RecordID: Record] {
        state.withLock { state in
            var found: [RecordID: Record] = [:]
            for id in ids {
                guard let stored = state.zones[id.zoneID]?.records[id.recordName], let record = stored.record else { continue }
                found[id] = Self.withSystemFields(record, stored)
            }
            return found
        }
    }

    public func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool) async throws -> [RecordOutcome] {
        let now = clock()
        return state.withLock { state in
            if atomic && zone == .default {
                return operations.map {
                    .failed($0.record.id, .badRequest, reason: "atomic operations are not supported in the default zone (\(zone))")
                }
            }
            let before = state.zones[zone]
            var seen: Set<String> = []
            var outcomes: [RecordOutcome] = []
            for operation in operations {
                if let problem = operation.requestProblem(zone: zone, zoneExists: state.zones[zone] != nil, seen: &seen) {
                    outcomes.append(problem)
                } else {
                    outcomes.append(Self.apply(operation, to: &state.zones[zone, default: Zone(number: 0)], now: now))
                }
            }
            guard atomic, outcomes.contains(where: { $0.errorCode != nil }) else { return outcomes }
            state.zones[zone] = before
            return RecordOperation.atomicFailure(outcomes)
        }
    }

    private static func apply(_ operation: RecordOperation, to zone: inout Zone, now: Int64) -> RecordOutcome {
        let record = operation.record
        let id = record.id
        guard !record.recordName.isEmpty else { return .failed(id, .badRequest, reason: "the record has no name") }
        let live = zone.records[record.recordName].flatMap { $0.record == nil ? nil : $0 }
        func tagProblem() -> RecordOutcome? { operation.changeTagProblem(liveTag: live?.changeTag) }
        func merged() -> Record {
            guard var base = live?.record else { return record }
            for field in record.fields { base.fields[field.name] = field.value }
            base.recordType = record.recordType
            return base
        }
        switch operation.kind {
        case .create:
            if live != nil { return .failed(id, .exists, reason: "record \(record.recordName) already exists in \(record.zoneID)") }
            return save(record, in: &zone, live: nil, now: now)
        case .update:
            if let problem = tagProblem() { return problem }
            return save(merged(), in: &zone, live: live, now: now)
        case .forceUpdate:
            return save(merged(), in: &zone, live: live, now: now)
        case .replace:
            if let problem = tagProblem() { return problem }
            return save(record, in: &zone, live: live, now: now)
        case .forceReplace:
            return save(record, in: &zone, live: live, now: now)
        case .delete:
            if let problem = tagProblem() { return problem }
            delete(record.recordName, in: &zone, now: now)
            return .deleted(id)
        case .forceDelete:
            guard live != nil else { return .failed(id, .notFound, reason: "no record \(record.recordName) in \(record.zoneID)") }
            delete(record.recordName, in: &zone, now: now)
            return .deleted(id)
        }
    }

    private static func save(_ record: Record, in zone: inout Zone, live: Stored?, now: Int64) -> RecordOutcome {
        for field in record.fields {
            for reference in field.value.references {
                if reference.zoneID != record.zoneID {
                    return .failed(
                        record.id, .badRequest, reason: "\(field.name) points into zone \(reference.zoneID); a reference cannot cross zones")
                }
                if reference.action == .validate && zone.records[reference.recordName]?.record == nil {
                    return .failed(
                        record.id, .validatingReferenceError,
                        reason: "\(field.name) must point at an existing record; \(reference.recordName) is not there")
                }
            }
        }
        var bare = record
        bare.system = nil
        zone.lastSequence += 1
        let stored = Stored(
            recordType: record.recordType, changeTag: String(zone.lastSequence, radix: 36), sequence: zone.lastSequence,
            created: live?.created ?? now, modified: now, record: bare, digest: RecordContent(bare).digest)
        zone.records[record.recordName] = stored
        return .saved(withSystemFields(bare, stored))
    }

    private static func delete(_ name: String, in zone: inout Zone, now: Int64) {
        var pending = [name]
        while let current = pending.popLast() {
            guard let stored = zone.records[current], stored.record != nil else { continue }
            zone.lastSequence += 1
            zone.records[current] = Stored(
                recordType: stored.recordType, changeTag: String(zone.lastSequence, radix: 36), sequence: zone.lastSequence,
                created: stored.created, modified: now, record: nil, digest: nil)
            for (dependent, candidate) in zone.records {
                guard let record = candidate.record else { continue }
                var pointsHere = false
                record.forEachDeleteSelfReference { _, reference in pointsHere = pointsHere || reference.recordName == current }
                if pointsHere { pending.append(dependent) }
            }
        }
    }

    private static func withSystemFields(_ record: Record, _ stored: Stored) -> Record {
        var record = record
        record.system = SystemFields(
            changeTag: stored.changeTag, created: RecordStamp(timestamp: stored.created), modified: RecordStamp(timestamp: stored.modified))
        return record
    }

    // MARK: Assets

    public func missingAssets(_ assets: [Asset]) async throws -> [Asset] {
        state.withLock { state in assets.filter { state.assets[$0.sha256].map { Int64($0.count) } != $0.size } }
    }

    public func putAsset(_ asset: Asset, bytes: AssetBytes) async throws -> Bool {
        var hasher = SHA256Hasher()
        var received: [UInt8] = []
        for try await piece in bytes {
            hasher.update(piece)
            received += piece
        }
        guard Int64(received.count) == asset.size, hasher.finalize() == asset.sha256 else {
            throw BackendError(
                .damaged, "asset \(asset.sha256): \(received.count) bytes received do not hash to it (expected \(asset.size)); the source is damaged")
        }
        return state.withLock { state in state.assets.updateValue(received, forKey: asset.sha256) == nil }
    }

    public func assetBytes(_ asset: Asset) async throws -> AssetBytes {
        guard let bytes = state.withLock({ $0.assets[asset.sha256] }) else {
            throw BackendError(.assetNotFound, "\(name): no asset \(asset.sha256)")
        }
        return .buffer(bytes, chunkSize: 64 << 10)
    }

    // MARK: Change feed

    public func changes(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> ChangePage {
        try state.withLock { state in
            guard let stored = state.zones[zone] else {
                throw BackendError(.zoneNotFound, "\(name): no zone \(zone)")
            }
            var after: Int64 = 0
            if let token {
                guard let (number, sequence) = Self.parse(token), number == stored.number else {
                    throw BackendError(.invalidToken, "\(name): sync token \(token) was not issued for zone \(zone); start without a token")
                }
                after = sequence
            }
            let changed = stored.records.filter { $0.value.sequence > after }.sorted { $0.value.sequence < $1.value.sequence }
            let page = changed.prefix(max(limit, 1))
            let changes: [RecordChange] = page.map { name, entry in
                guard let record = entry.record else {
                    return .deletion(Deletion(recordType: entry.recordType, recordName: name, zoneID: zone))
                }
                return .record(Self.withSystemFields(record, entry))
            }
            let moreComing = changed.count > page.count
            let last = moreComing ? (page.last?.value.sequence ?? after) : max(after, stored.lastSequence)
            return ChangePage(changes: changes, syncToken: Self.token(zone: stored.number, sequence: last), moreComing: moreComing)
        }
    }

    private static func token(zone: Int64, sequence: Int64) -> SyncToken { SyncToken(tag: "m", zone: zone, sequence: sequence) }

    private static func parse(_ token: SyncToken) -> (Int64, Int64)? { token.position(tag: "m") }

    // MARK: Journal

    public func checkpoint(run: String) async throws -> CopyCheckpoint? { state.withLock { $0.checkpoints[run] } }

    public func setCheckpoint(run: String, source: String, _ checkpoint: CopyCheckpoint) async throws {
        state.withLock { $0.checkpoints[run] = checkpoint }
    }

    public func deferRecord(_ record: Record, run: String) async throws {
        var bare = record
        bare.system = nil
        state.withLock { $0.deferred[run, default: []].append(bare) }
    }

    public func takeDeferred(run: String) async throws -> [Record] {
        state.withLock { $0.deferred.removeValue(forKey: run) ?? [] }
    }
}

extension InMemoryRecordStore: LineReading {
    /// The change feed's page, each record written in canonical form.
    public func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> LinePage {
        LinePage(try await changes(in: zone, since: token, limit: limit))
    }
}
