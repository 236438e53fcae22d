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
            let name = field.name
            for reference in field.value.references where reference.action == .deleteSelf {
                let key = RecordKey(reference.target)
                counts[key, default: 0] += 1
                if counts[key] == Int32(limit + 1) {
                    problems.append(
                        RecordProblem(
                            .warning, .deleteSelfLimit, at: "fields.\(name)",
                            "record \(reference.target) is now the target of more than \(limit) DELETE_SELF references; CloudKit refuses more"))
                }
            }
        }
        return problems
    }
}
