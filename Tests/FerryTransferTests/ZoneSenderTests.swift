import FerryRecords
import Testing

@testable import FerryTransfer

/// How a zone's changes of a round are cut into phases that name each record once.
@Suite struct ZoneSenderTests {
    private func changes(_ names: [String]) -> [SourceChange] {
        names.map { name in
            name.hasPrefix("-")
                ? SourceChange(
                    .deletion(Deletion(recordType: "Car", recordName: String(name.dropFirst()), zoneID: ZoneID(zoneName: "Z"))), origin: name)
                : SourceChange(.record(Record(recordType: "Car", recordName: name, zoneID: ZoneID(zoneName: "Z"), fields: [:])), origin: name)
        }
    }

    @Test func changesNamingEachRecordOnceAreOnePhase() {
        let all = changes(["a", "b", "c", "d"])
        #expect(ZoneSender.phases([0, 1, 2, 3], changes: all) == [[0, 1, 2, 3]])
        #expect(ZoneSender.phases([3, 1], changes: all) == [[3, 1]], "only the indices asked for, in their order")
        #expect(ZoneSender.phases([], changes: all).isEmpty)
    }

    @Test func aPhaseEndsBeforeANameItHoldsAlready() {
        // A record written, deleted, written again: each change meets the one before it, written first.
        let all = changes(["a", "b", "-a", "c", "a", "b"])
        #expect(ZoneSender.phases([0, 1, 2, 3, 4, 5], changes: all) == [[0, 1], [2, 3], [4, 5]])
        #expect(ZoneSender.phases([0, 2, 4], changes: all) == [[0], [2], [4]])
        #expect(ZoneSender.phases([1, 3, 5], changes: all) == [[1, 3], [5]])
    }
}
