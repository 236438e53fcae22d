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
        /// Deletes the record whatever the change tag.
        case forceDelete
    }

    /// The operation type.
    public var kind: Kind
    /// The record (for deletions only its type, name and zone matter).
    public var record: Record
    /// The change tag the client last saw (required by update, replace and delete).
    public var recordChangeTag: String?

    /// Creates an operation.
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

/// CloudKit's per-record `serverErrorCode`s that the local store gives.
public enum ServerErrorCode: String, Sendable, Hashable {
    case atomicError = "ATOMIC_ERROR"
    case badRequest = "BAD_REQUEST"
    case conflict = "CONFLICT"
    case exists = "EXISTS"
    case notFound = "NOT_FOUND"
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    case zoneNotFound = "ZONE_NOT_FOUND"
}

/// What became of one operation.
public enum RecordOutcome: Sendable, Hashable {
    /// The record as stored, with its new change tag and timestamps.
    case saved(Record)
    /// The record was deleted.
    case deleted(RecordID)
    /// The operation failed; nothing changed for this record.
    case failed(RecordID, ServerErrorCode, reason: String)

    /// The failure code, if the operation failed.
    public var errorCode: ServerErrorCode? {
        if case .failed(_, let code, _) = self { return code }
        return nil
    }
}
