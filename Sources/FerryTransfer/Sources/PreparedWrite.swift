import FerryCore
import FerryLocalStore
import FerryRecords

/// The work a target does on each change that needs no target state, done ahead on the thread that reads the source.
public struct PreparedWrite: Sendable {
    /// The change's validation errors.
    public var errors: [RecordProblem]
    /// A record's body as the local store keeps it, with its content digest.
    public var encoded: (body: [UInt8], digest: SHA256Digest)?

    /// Validates and encodes a change for a local store.
    public init(_ change: RecordChange, validator: RecordValidator) {
        errors = validator.problems(in: change).filter { $0.severity == .error }
        if case .record(let record) = change, errors.isEmpty { encoded = LocalStoreBatch.encode(record) }
    }
}
