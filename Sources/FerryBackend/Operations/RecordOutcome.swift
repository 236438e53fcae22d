import FerryRecords

/// CloudKit's per-record `serverErrorCode`s, as every backend reports them.
public enum ServerErrorCode: String, Sendable, Hashable, CaseIterable {
    /// The caller may not do this (a permission the backend checks).
    case accessDenied = "ACCESS_DENIED"
    /// Another operation of the same atomic request failed; this one was not applied.
    case atomicError = "ATOMIC_ERROR"
    /// The credentials were refused.
    case authenticationFailed = "AUTHENTICATION_FAILED"
    /// The operation is malformed (no record name, a reference across zones, two operations on one record).
    case badRequest = "BAD_REQUEST"
    /// The change tag given is not the record's current one.
    case conflict = "CONFLICT"
    /// A create named a record that exists.
    case exists = "EXISTS"
    /// The backend failed; the operation may be retried.
    case internalError = "INTERNAL_ERROR"
    /// No such record.
    case notFound = "NOT_FOUND"
    /// The backend's storage quota is used up.
    case quotaExceeded = "QUOTA_EXCEEDED"
    /// Too many requests; retry after the time given.
    case throttled = "THROTTLED"
    /// The backend is busy or restarting; retry after the time given.
    case tryAgainLater = "TRY_AGAIN_LATER"
    /// A VALIDATE reference points at a record that is not there.
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    /// The record's zone does not exist.
    case zoneNotFound = "ZONE_NOT_FOUND"

    /// Whether the same operation may succeed when sent again later (after ``RecordOutcome/retryAfter``, if given).
    public var isRetryable: Bool {
        switch self {
        case .throttled, .tryAgainLater, .internalError, .atomicError: true
        default: false
        }
    }
}

/// What became of one operation of a modify request.
public enum RecordOutcome: Sendable, Hashable {
    /// The record as stored, with its new change tag and timestamps.
    case saved(Record)
    /// The record was deleted.
    case deleted(RecordID)
    /// The operation failed; nothing changed for this record. Retryable codes may say how long to wait first.
    case failed(RecordID, ServerErrorCode, reason: String, retryAfter: Duration? = nil)

    /// The failure code, if the operation failed.
    public var errorCode: ServerErrorCode? {
        if case .failed(_, let code, _, _) = self { return code }
        return nil
    }

    /// How long the backend asked to wait before retrying, for a retryable failure that said.
    public var retryAfter: Duration? {
        if case .failed(_, _, _, let wait) = self { return wait }
        return nil
    }

    /// The record the outcome is about.
    public var recordID: RecordID {
        switch self {
        case .saved(let record): record.id
        case .deleted(let id), .failed(let id, _, _, _): id
        }
    }
}
