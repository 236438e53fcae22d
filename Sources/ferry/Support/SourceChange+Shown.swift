import FerryRecords
import FerryTransfer

extension SourceChange {
    /// Where a change came from and what it is, for warnings (`Car p3 → Car Car.0E6F…`).
    ///
    /// Made only when there is a warning to show: most changes have none.
    var shown: String { "\(origin) → \(change.recordType) \(change.recordName)" }
}
