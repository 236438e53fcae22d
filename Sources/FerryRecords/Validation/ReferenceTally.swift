/// Counts DELETE_SELF references per target across a stream of records, to warn when a target has more than
/// CloudKit's limit (750).
///
/// Memory grows with the number of distinct targets, which is bounded by the number of parent records.
public struct ReferenceTally: Sendable {
    private var counts = RecordKeyMap<Int32>()
    private let limit: Int

    /// Creates a tally with CloudKit's limit, or another.
    public init(limit: Int = RecordValidator.Limits().maxDeleteSelfReferencesPerTarget) { self.limit = limit }

    /// Counts one DELETE_SELF reference.
    /// - Returns: a warning if its target's count just went over the limit.
    public mutating func count(_ reference: DeleteSelfReference) -> RecordProblem? {
        countPassesLimit(reference.key) ? warning(field: reference.field, target: reference.target) : nil
    }

    /// Counts one DELETE_SELF reference by its target's key.
    /// - Returns: whether the target's count just went over the limit: `true` once per target, when to warn.
    public mutating func countPassesLimit(_ target: RecordKey) -> Bool {
        // One table access: the count is bumped and read through the same `inout`.
        func bump(_ count: inout Int32) -> Int32 {
            count += 1
            return count
        }
        return bump(&counts[target, default: 0]) == Int32(limit + 1)
    }

    /// The warning for a target that just went over the limit, naming the field of the reference that did it.
    public func warning(field: String, target: RecordID) -> RecordProblem {
        RecordProblem(
            .warning, .deleteSelfLimit, at: "fields.\(field)",
            "record \(target) is now the target of more than \(limit) DELETE_SELF references; CloudKit refuses more")
    }

    /// A record's DELETE_SELF references (single or in lists), with their targets' keys, in field order.
    public static func deleteSelfReferences(in record: Record) -> [DeleteSelfReference] {
        var found: [DeleteSelfReference] = []
        record.forEachDeleteSelfReference { field, reference in found.append(DeleteSelfReference(field: field, target: reference.target)) }
        return found
    }
}

/// A DELETE_SELF reference as the tally counts it: the field it is in and its target, with the target's key
/// (computed once, where the record is prepared).
public struct DeleteSelfReference: Sendable {
    /// The field holding the reference.
    public let field: String
    /// The referenced record.
    public let target: RecordID
    /// The target's key.
    public let key: RecordKey

    /// A reference from `field` to `target`.
    public init(field: String, target: RecordID) {
        self.field = field
        self.target = target
        key = RecordKey(target)
    }
}
