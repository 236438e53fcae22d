import FerryBackend
import FerryCore
import FerryRecords

/// The work a copy does on each change that needs no target state, done ahead on the thread that reads the source.
package struct PreparedWrite: Sendable {
    /// The change's validation errors.
    package var errors: [RecordProblem]
    /// What the target holds as it is but CloudKit would refuse from a client (a name starting with `_`, a record over
    /// 1 MB), for the copy's warnings.
    package var warnings: [RecordProblem]
    /// A record's canonical body without system fields, with its content digest.
    package var encoded: RecordContent?

    /// Validates and encodes a change (the body is the one every backend stores and digests).
    package init(_ change: RecordChange, validator: RecordValidator) {
        let problems = validator.problems(in: change)
        errors = problems.filter { $0.severity == .error }
        warnings = problems.filter { $0.severity == .warning }
        if case .record(let record) = change, errors.isEmpty { encoded = RecordContent(record) }
    }

    /// Adds the warnings to the change's problems, which the copy reports.
    func reportWarnings(in change: inout SourceChange) {
        if !warnings.isEmpty { change.problems += warnings.map(\.description) }
    }
}

extension SourceChange {
    /// Does a target's per-change work ahead (``PreparedWrite``: validation, the canonical body and its digest), and
    /// adds the change's warnings (what CloudKit alone would refuse) to its problems, which the copy reports.
    mutating func prepareWrite(validator: RecordValidator) {
        let write = PreparedWrite(change, validator: validator)
        write.reportWarnings(in: &self)
        prepared = write
    }
}

extension PipelinedChangeSource {
    /// Has the reading thread prepare each change for its write (``PreparedWrite``) when it has time.
    func prepareWrites(validator: RecordValidator) {
        prepare = { change in change.prepareWrite(validator: validator) }
    }
}
