import FerryBackend
import FerryRecords
import FerryTransfer

/// Records from memory as a change source, failing before the record numbered `failAt` while it is set (a crash
/// mid-copy); each change's origin is `#` and its number.
final class MemorySource: ChangeSource {
    let records: [Record]
    var failAt: Int?

    init(_ records: [Record], failAt: Int? = nil) {
        self.records = records
        self.failAt = failAt
    }

    /// What the source throws at `failAt`.
    struct Crash: Error {}

    var kind: String { "test" }
    var description: String { "memory" }
    var fingerprint: String { "memory|\(records.count)" }
    var assets: (any AssetProvider)? { nil }

    func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        for (index, record) in records.enumerated() {
            if index == failAt { throw Crash() }
            try body(SourceChange(.record(record), origin: "#\(index)"))
        }
    }
}
