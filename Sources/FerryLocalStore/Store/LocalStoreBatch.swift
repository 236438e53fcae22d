import FerryBackend
import FerryCore
import FerryJSON
import FerryRecords
import Foundation
import GRDB

/// The work of one write transaction on a local store: record operations, zones, assets and the copy journal.
///
/// Obtained from ``LocalStore/write(_:)``; valid only inside it.
public final class LocalStoreBatch {
    let db: Database
    /// Strong: a batch lives only inside its store's `write`, and reading an unowned reference costs an atomic
    /// retain and release each time (several times per record a copy writes).
    let store: LocalStore
    /// The time stamped on every record this batch writes.
    let now: Int64
    private var zoneNumbers: [ZoneID: Int64] = [:]
    /// The zone asked for last: a copy asks for one zone several times per record, and comparing is cheaper than
    /// hashing its two names.
    private var lastZone: (zone: ZoneID, number: Int64)?
    /// Each touched zone's last change sequence, written back at the end.
    private var sequences: [Int64: Int64] = [:]
    /// The last record state read, until the next write.
    private var lastLookup: (zone: Int64, name: String, state: StoredRecord?)?
    /// The statements every copied record runs (see ``BatchStatements``).
    var statements = BatchStatements()

    init(db: Database, store: LocalStore, now: Int64) {
        self.db = db
        self.store = store
        self.now = now
    }

    /// Writes the zones' new change sequences (called by ``LocalStore/write(_:)`` before commit).
    func flush() throws {
        for (zone, sequence) in sequences {
            try db.execute(sql: "UPDATE zones SET last_seq = ? WHERE id = ?", arguments: [sequence, zone])
        }
    }

    // MARK: Zones

    /// The number of an existing zone.
    func zoneNumber(_ zone: ZoneID) throws -> Int64? {
        if let lastZone, lastZone.zone == zone { return lastZone.number }
        let number: Int64?
        if let known = zoneNumbers[zone] {
            number = known
        } else {
            number = try Int64.fetchOne(
                db, sql: "SELECT id FROM zones WHERE zone_name = ? AND owner_name = ?", arguments: [zone.zoneName, zone.ownerName])
            if let number { zoneNumbers[zone] = number }
        }
        if let number { lastZone = (zone, number) }
        return number
    }

    /// Creates a zone; `false` when it existed.
    @discardableResult
    public func createZone(_ zone: ZoneID) throws -> Bool {
        if try zoneNumber(zone) != nil { return false }
        try db.execute(sql: "INSERT INTO zones(zone_name, owner_name, last_seq) VALUES (?, ?, 0)", arguments: [zone.zoneName, zone.ownerName])
        zoneNumbers[zone] = db.lastInsertedRowID
        return true
    }

    /// Deletes a zone with its records; `false` when there was none.
    public func deleteZone(_ zone: ZoneID) throws -> Bool {
        guard zone != .default, let number = try zoneNumber(zone) else { return false }
        try endBulkLoad()
        lastLookup = nil
        try db.execute(sql: "DELETE FROM records WHERE zone = ?", arguments: [number])
        try db.execute(sql: "DELETE FROM refs WHERE zone = ?", arguments: [number])
        try db.execute(sql: "DELETE FROM zones WHERE id = ?", arguments: [number])
        zoneNumbers[zone] = nil
        lastZone = nil
        sequences[number] = nil
        return true
    }

    private func nextSequence(_ zone: Int64) throws -> Int64 {
        // One hash per record: the stored sequence is counted up where it lies.
        if let index = sequences.index(forKey: zone) {
            sequences.values[index] += 1
            return sequences.values[index]
        }
        let next = (try Int64.fetchOne(db, sql: "SELECT last_seq FROM zones WHERE id = ?", arguments: [zone]) ?? 0) + 1
        sequences[zone] = next
        return next
    }

    // MARK: Records

    /// A record's current state, live or tombstone.
    public func lookup(_ id: RecordID) throws -> StoredRecord? {
        guard let zone = try zoneNumber(id.zoneID) else { return nil }
        return try lookup(zone: zone, name: id.recordName)
    }

    private func lookup(zone: Int64, name: String) throws -> StoredRecord? {
        // A copy looks a record up, then applies an operation that looks it up again: the second is free (every write
        // forgets the answer).
        if let last = lastLookup, last.zone == zone, last.name == name { return last.state }
        if let bulk = store.bulkLoad {
            // During a bulk load a name the load did not write is not in the store; one it may have written needs the
            // index back.
            guard bulk.mayContain(zone: zone, name: name) else {
                lastLookup = (zone, name, nil)
                return nil
            }
            try endBulkLoad()
        }
        let state = try fetchState(zone: zone, name: name)
        lastLookup = (zone, name, state)
        return state
    }

    /// The live record with its system fields, decoded from its stored form.
    public func record(_ id: RecordID) throws -> Record? {
        guard let state = try lookup(id), !state.isDeleted else { return nil }
        return try decode(state, id: id)
    }

    func decode(_ state: StoredRecord, id: RecordID) throws -> Record {
        // Lookups leave the body out (a copy compares digests); it is read here, when a record is decoded.
        let body = try zoneNumber(id.zoneID).flatMap { zone in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT body FROM records WHERE zone = ? AND name = ?"), arguments: [zone, id.recordName])
        }.map { Array($0) }
        return try state.record(body: body, id: id, storePath: store.path)
    }

    /// Applies operations in order; with `atomic`, one failure undoes them all (see ``LocalStore/modify(_:atomic:)``).
    public func modify(_ operations: [RecordOperation], atomic: Bool) throws -> [RecordOutcome] {
        var seen: Set<RecordID> = []
        let duplicates = operations.map { !seen.insert($0.record.id).inserted }
        if atomic, let zone = operations.first(where: { $0.record.zoneID == .default })?.record.zoneID {
            return operations.map { .failed($0.record.id, .badRequest, reason: "atomic operations are not supported in the default zone (\(zone))") }
        }
        guard atomic else {
            return try zip(operations, duplicates).map { operation, duplicate in
                duplicate ? .failed(operation.record.id, .badRequest, reason: "one operation per record per request") : try apply(operation)
            }
        }
        var outcomes: [RecordOutcome] = []
        let savedSequences = sequences
        try db.execute(sql: "SAVEPOINT atomic_batch")
        for (operation, duplicate) in zip(operations, duplicates) {
            outcomes.append(
                duplicate ? .failed(operation.record.id, .badRequest, reason: "one operation per record per request") : try apply(operation))
        }
        guard outcomes.contains(where: { $0.errorCode != nil }) else {
            try db.execute(sql: "RELEASE SAVEPOINT atomic_batch")
            return outcomes
        }
        try db.execute(sql: "ROLLBACK TO SAVEPOINT atomic_batch")
        lastLookup = nil
        try db.execute(sql: "RELEASE SAVEPOINT atomic_batch")
        sequences = savedSequences
        return RecordOperation.atomicFailure(outcomes)
    }

    /// Applies one operation; `encoded` is the record's content (``RecordContent``) when the caller already has it (replace
    /// operations only).
    public func apply(_ operation: RecordOperation, encoded: RecordContent? = nil) throws -> RecordOutcome {
        let record = operation.record
        let id = record.id
        let (zone, live): (Int64, StoredRecord?)
        switch try locate(record) {
        case .found(let number, let stored): (zone, live) = (number, stored)
        case .failed(let failure): return failure
        }
        func tagProblem() -> RecordOutcome? { operation.changeTagProblem(liveTag: live?.changeTag) }
        switch operation.kind {
        case .create:
            if live != nil { return .failed(id, .exists, reason: "record \(record.recordName) already exists in \(record.zoneID)") }
            return try save(record, zone: zone, previous: nil).outcome(record)
        case .update:
            if let problem = tagProblem() { return problem }
            let merged = try merged(record, over: live, zone: zone)
            return try save(merged, zone: zone, previous: live).outcome(merged)
        case .forceUpdate:
            let merged = try merged(record, over: live, zone: zone)
            return try save(merged, zone: zone, previous: live).outcome(merged)
        case .replace:
            if let problem = tagProblem() { return problem }
            return try save(record, zone: zone, previous: live).outcome(record)
        case .forceReplace:
            return try save(record, zone: zone, previous: live, encoded: encoded).outcome(record)
        case .delete:
            if let problem = tagProblem() { return problem }
            try delete(zone: zone, name: record.recordName, type: live?.recordType ?? record.recordType)
            return .deleted(id)
        case .forceDelete:
            guard let live else { return .failed(id, .notFound, reason: "no record \(record.recordName) in \(record.zoneID)") }
            try delete(zone: zone, name: record.recordName, type: live.recordType)
            return .deleted(id)
        }
    }

    /// Writes a record over whatever the store holds (forceReplace's semantics) from its stored form, as a copy does.
    ///
    /// Unlike ``apply(_:encoded:)`` with a forceReplace operation, it takes the record as it is (no operation to wrap
    /// it in) and hands no stored record back, so a copy's record is not copied on its way to the store.
    /// - Returns: `nil` when the record was written, else the failure.
    public func forceReplace(_ record: Record, encoded: RecordContent) throws -> RecordOutcome? {
        switch try locate(record) {
        case .failed(let failure):
            return failure
        case .found(let zone, let live):
            if case .failed(let failure) = try save(record, zone: zone, previous: live, encoded: encoded) { return failure }
            return nil
        }
    }

    /// Where a record an operation names stands: its zone's number and its live stored version, or why no operation
    /// can write it.
    private enum Located {
        case found(zone: Int64, live: StoredRecord?)
        case failed(RecordOutcome)
    }

    private func locate(_ record: Record) throws -> Located {
        guard let zone = try zoneNumber(record.zoneID) else {
            return .failed(.failed(record.id, .zoneNotFound, reason: "zone \(record.zoneID) does not exist; create it first"))
        }
        guard !record.recordName.isEmpty else { return .failed(.failed(record.id, .badRequest, reason: "the record has no name")) }
        let live = try lookup(zone: zone, name: record.recordName).flatMap { $0.isDeleted ? nil : $0 }
        return .found(zone: zone, live: live)
    }

    /// What ``save(_:zone:previous:encoded:)`` did.
    private enum Saved {
        /// Written, with these system fields.
        case written(SystemFields)
        /// Not written.
        case failed(RecordOutcome)

        /// The operation's outcome: the record as stored, or the failure.
        func outcome(_ record: Record) -> RecordOutcome {
            switch self {
            case .written(let system):
                var saved = record
                saved.system = system
                return .saved(saved)
            case .failed(let failure):
                return failure
            }
        }
    }

    /// The listed fields of `record` over the stored record's fields (update's semantics).
    private func merged(_ record: Record, over live: StoredRecord?, zone: Int64) throws -> Record {
        guard let live else { return record }
        var base = try decode(live, id: record.id)
        for field in record.fields { base.fields[field.name] = field.value }
        base.recordType = record.recordType
        return base
    }

    private func save(_ record: Record, zone: Int64, previous: StoredRecord?, encoded: RecordContent? = nil) throws
        -> Saved
    {
        if let failure = try referenceFailure(of: record, zone: zone) { return .failed(failure) }
        lastLookup = nil
        // The rows in `refs` the record had, from its body before it is overwritten.
        let oldTargets = previous == nil ? [] : try storedDeleteSelfTargets(zone: zone, name: record.recordName)
        let content = encoded ?? RecordContent(record)
        let sequence = try nextSequence(zone)
        let tag = String(sequence, radix: 36)
        let created = previous?.created ?? now
        try upsertRecord(
            zone: zone, name: record.recordName, type: record.recordType, tag: tag, sequence: sequence, created: created, digest: content.digest,
            body: content.body)
        try replaceReferences(zone: zone, source: record.recordName, old: oldTargets, new: Self.deleteSelfTargets(of: record))
        return .written(SystemFields(changeTag: tag, created: RecordStamp(timestamp: created), modified: RecordStamp(timestamp: now)))
    }

    /// Why a record's references keep it from being written: one into another zone, or a VALIDATE one to a record
    /// that is not there; `nil` when none does.
    private func referenceFailure(of record: Record, zone: Int64) throws -> RecordOutcome? {
        var failure: RecordOutcome?
        // A flag, not `failure == nil`: asked per reference, an optional enum's case costs more than the rest.
        var failed = false
        for field in record.fields where !failed {
            try field.value.forEachReference { reference in
                guard !failed else { return }
                if reference.zoneID != record.zoneID {
                    failed = true
                    failure = .failed(
                        record.id, .badRequest, reason: "\(field.name) points into zone \(reference.zoneID); a reference cannot cross zones")
                    return
                }
                guard reference.action == .validate else { return }
                let target = try lookup(zone: zone, name: reference.recordName)
                if target == nil || target?.isDeleted == true {
                    failed = true
                    failure = .failed(
                        record.id, .validatingReferenceError,
                        reason: "\(field.name) must point at an existing record; \(reference.recordName) is not there")
                }
            }
        }
        return failure
    }

    /// Forgets what the batch remembers of the store's rows (after the indexes change).
    func resetCachedState() { lastLookup = nil }

    /// Leaves a tombstone, then deletes the records that point here with DELETE_SELF (as CloudKit does).
    private func delete(zone: Int64, name: String, type: String) throws {
        try endBulkLoad()
        lastLookup = nil
        var pending = [(name, type)]
        var visited: Set<String> = []
        while let (current, currentType) = pending.popLast() {
            guard visited.insert(current).inserted else { continue }
            let targets = try storedDeleteSelfTargets(zone: zone, name: current)
            let sequence = try nextSequence(zone)
            try db.execute(
                sql: """
                    INSERT INTO records(zone, name, type, tag, seq, created, modified, deleted, digest, body) VALUES (?, ?, ?, ?, ?, ?, ?, 1, NULL, NULL)
                    ON CONFLICT(zone, name) DO UPDATE SET tag = excluded.tag, seq = excluded.seq, modified = excluded.modified, deleted = 1,
                        digest = NULL, body = NULL
                    """,
                arguments: [zone, current, currentType, String(sequence, radix: 36), sequence, now, now])
            try replaceReferences(zone: zone, source: current, old: targets, new: [])
            let dependents = try Row.fetchAll(
                db,
                sql: """
                    SELECT r.name, r.type FROM refs f JOIN records r ON r.zone = f.zone AND r.name = f.source
                    WHERE f.zone = ? AND f.target = ? AND r.deleted = 0
                    """, arguments: [zone, current])
            for row in dependents { pending.append((row[0], row[1])) }
        }
    }
}
