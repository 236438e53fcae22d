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
    ///
    /// Borrowed: an initializer otherwise takes its arguments owned, and every caller copied its change to pass it.
    package init(_ change: borrowing RecordChange, validator: RecordValidator) {
        let problems = validator.problems(in: change)
        errors = problems.filter { $0.severity == .error }
        warnings = problems.filter { $0.severity == .warning }
        guard errors.isEmpty else { return }
        switch change {
        case .record(let record): encoded = RecordContent(record)
        case .deletion: break
        }
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
        prepared = preparedWrite(validator: validator)
    }

    /// The change's ``PreparedWrite``, its warnings added to its problems; made in place (an element of an array
    /// passed along as `changes[index].change` was a copy of the change, every string retained, then released).
    mutating func preparedWrite(validator: RecordValidator) -> PreparedWrite {
        let write = PreparedWrite(change, validator: validator)
        write.reportWarnings(in: &self)
        return write
    }
}

extension PipelinedChangeSource {
    /// Has each change prepared for its write (``PreparedWrite``): by the reading thread when it has time, or by a
    /// thread of its own (``preparesOnItsOwnThread``).
    func prepareWrites(validator: RecordValidator, onItsOwnThread: Bool = false) {
        prepare = { change in change.prepareWrite(validator: validator) }
        preparesOnItsOwnThread = onItsOwnThread
    }
}
