import FerryRecords

/// One operation of a modify request, with CloudKit Web Services' semantics (`records/modify`).
public struct RecordOperation: Sendable, Hashable {
    /// CloudKit's `operationType`.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Fails with EXISTS when the record exists.
        case create
        /// Changes only the listed fields; the change tag must be current (CONFLICT otherwise).
        case update
        /// Changes only the listed fields whatever the change tag; creates the record when missing.
        case forceUpdate
        /// Replaces all fields (unlisted ones removed); the change tag must be current.
        case replace
        /// Replaces all fields whatever the change tag; creates the record when missing (the idempotent upsert).
        case forceReplace
        /// Deletes the record; the change tag must be current.
        case delete
        /// Deletes the record whatever the change tag (NOT_FOUND when there is none).
        case forceDelete

        /// Whether the operation deletes.
        public var isDeletion: Bool { self == .delete || self == .forceDelete }
    }

    /// The operation type.
    public var kind: Kind
    /// The record (for deletions only its type, name and zone matter).
    public var record: Record
    /// The change tag the client last saw (required by update, replace and delete).
    public var recordChangeTag: String?

    /// Creates an operation; the change tag defaults to the record's own.
    public init(_ kind: Kind, _ record: Record, recordChangeTag: String? = nil) {
        self.kind = kind
        self.record = record
        self.recordChangeTag = recordChangeTag ?? record.system?.changeTag
    }

    /// A deletion operation for a record ID.
    public static func delete(_ deletion: Deletion, force: Bool = true, recordChangeTag: String? = nil) -> RecordOperation {
        RecordOperation(
            force ? .forceDelete : .delete, Record(recordType: deletion.recordType, recordName: deletion.recordName, zoneID: deletion.zoneID),
            recordChangeTag: recordChangeTag)
    }
}

extension RecordOperation {
    /// Why an operation that needs the record's current change tag cannot apply, or `nil` when it can.
    ///
    /// For update, replace and delete against a record whose live change tag is `liveTag` (`nil`: no live record):
    /// NOT_FOUND without a record, BAD_REQUEST without a tag, CONFLICT for another tag. Every backend answers so.
    public func changeTagProblem(liveTag: String?) -> RecordOutcome? {
        let id = record.id
        guard let liveTag else { return .failed(id, .notFound, reason: "no record \(record.recordName) in \(record.zoneID)") }
        guard let tag = recordChangeTag else {
            return .failed(id, .badRequest, reason: "missing required field 'recordChangeTag' for \(kind.rawValue)")
        }
        guard tag == liveTag else {
            return .failed(id, .conflict, reason: "change tag \(tag) is not current (\(liveTag)); fetch the record and retry")
        }
        return nil
    }

    /// Why this operation of a modify request in `zone` cannot be applied whatever the store holds, or `nil`.
    ///
    /// A record of another zone, a record the request already named (`seen` notes the names), a zone that does not
    /// exist. Every backend checks a request's operations so, in order.
    public func requestProblem(zone: ZoneID, zoneExists: Bool, seen: inout Set<String>) -> RecordOutcome? {
        let id = record.id
        if record.zoneID != zone {
            return .failed(id, .badRequest, reason: "the record is in zone \(record.zoneID), the request in \(zone)")
        }
        if !seen.insert(record.recordName).inserted {
            return .failed(id, .badRequest, reason: "one operation per record per request")
        }
        if !zoneExists { return .failed(id, .zoneNotFound, reason: "zone \(zone) does not exist; create it first") }
        return nil
    }

    /// The outcomes of an atomic request one of whose operations failed: the failures as they are, every other
    /// operation ATOMIC_ERROR (nothing of the request was applied).
    public static func atomicFailure(_ outcomes: [RecordOutcome]) -> [RecordOutcome] {
        outcomes.map { outcome in
            outcome.errorCode != nil ? outcome : .failed(outcome.recordID, .atomicError, reason: "another operation of the atomic batch failed")
        }
    }
}
