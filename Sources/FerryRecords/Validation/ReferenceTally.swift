/// Counts DELETE_SELF references per target across a stream of records, to warn when a target has more than
/// CloudKit's limit (750).
///
/// Memory grows with the number of distinct targets, which is bounded by the number of parent records.
public struct ReferenceTally: Sendable {
    private var counts: [RecordKey: Int32] = [:]
    private let limit: Int

    /// Creates a tally with CloudKit's limit, or another.
    public init(limit: Int = RecordValidator.Limits().maxDeleteSelfReferencesPerTarget) { self.limit = limit }

    /// Counts a record's DELETE_SELF references.
    /// - Returns: a warning for each target whose count just went over the limit.
    public mutating func count(_ record: Record) -> [RecordProblem] {
        var problems: [RecordProblem] = []
        for field in record.fields {
            for reference in field.value.references where reference.action == .deleteSelf {
                if let problem = count(target: reference.target, key: RecordKey(reference.target), field: field.name) {
                    problems.append(problem)
                }
            }
        }
        return problems
    }

    /// Counts one DELETE_SELF reference, from field `field` to `target` (whose key is `key`).
    /// - Returns: a warning if the target's count just went over the limit.
    public mutating func count(target: RecordID, key: RecordKey, field: String) -> RecordProblem? {
        counts[key, default: 0] += 1
        guard counts[key] == Int32(limit + 1) else { return nil }
        return RecordProblem(
            .warning, .deleteSelfLimit, at: "fields.\(field)",
            "record \(target) is now the target of more than \(limit) DELETE_SELF references; CloudKit refuses more")
    }
}
