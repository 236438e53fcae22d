extension RecordValidator {
    /// The warning for a target that just went over the DELETE_SELF limit, naming the field of the reference that did
    /// it. (Counting is the caller's: bundle writing and verification count on disk, over all records.)
    public func deleteSelfLimitWarning(field: String, target: RecordID) -> RecordProblem {
        let limit = limits.maxDeleteSelfReferencesPerTarget
        return RecordProblem(
            .warning, .deleteSelfLimit, at: "fields.\(field)",
            "record \(target) is now the target of more than \(limit) DELETE_SELF references; CloudKit refuses more")
    }

    /// The warning for the first DELETE_SELF reference of `record` to the target with this key, or `nil` if it has
    /// none.
    public func deleteSelfLimitWarning(in record: Record, target: RecordKey) -> RecordProblem? {
        var warning: RecordProblem?
        record.forEachDeleteSelfReference { field, reference in
            if warning == nil, RecordKey(reference.target) == target { warning = deleteSelfLimitWarning(field: field, target: reference.target) }
        }
        return warning
    }
}
