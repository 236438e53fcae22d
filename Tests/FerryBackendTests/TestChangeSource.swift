import FerryBackend
import FerryRecords
import FerryTransfer
import Foundation

/// Changes from memory, with their assets in a directory, failing before change `failAfter` (a crash mid-copy).
final class TestChangeSource: ChangeSource {
    let changes: [RecordChange]
    let provider: (any AssetProvider)?
    var failAfter: Int?
    let name: String

    struct Crash: Error {}

    init(_ changes: [RecordChange], assets: (any AssetProvider)? = nil, failAfter: Int? = nil, name: String = "test") {
        self.changes = changes
        provider = assets
        self.failAfter = failAfter
        self.name = name
    }

    var kind: String { "test" }
    var description: String { name }
    var fingerprint: String { "test|\(name)|\(changes.count)" }
    var assets: (any AssetProvider)? { provider }
    var expectedChanges: Int? { changes.count }

    func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        for (index, change) in changes.enumerated() {
            if let failAfter, index == failAfter { throw Crash() }
            try body(SourceChange(change, origin: "#\(index + 1)"))
        }
    }
}

/// Every live record of every zone of a backend, by ID, without system fields: what two copies compare.
func contents(of store: any RecordStore) async throws -> [RecordID: Record] {
    var all: [RecordID: Record] = [:]
    for zone in try await store.zones() {
        var token: SyncToken?
        while true {
            let page = try await store.changes(in: zone.zoneID, since: token, limit: 100)
            for change in page.changes {
                if case .record(var record) = change {
                    record.system = nil
                    all[record.id] = record
                }
            }
            token = page.syncToken
            if !page.moreComing { break }
        }
    }
    return all
}
