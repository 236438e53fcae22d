/// Counts DELETE_SELF references per target in memory, to warn when a target has more than CloudKit's limit (750),
/// and words that warning.
///
/// Memory grows with the number of distinct targets. (Bundle writing and verification count on disk instead, with
/// sorted runs, and use this type for the warning.)
public struct ReferenceTally: Sendable {
    private var counts = RecordKeyMap<Int32>()
    private let limit: Int

    /// Creates a tally with CloudKit's limit, or another.
    public init(limit: Int = RecordValidator.Limits().maxDeleteSelfReferencesPerTarget) { self.limit = limit }

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
}
