import FerryCore
import FerryRecords
import FerryTesting
import FerryTransfer
import Foundation
import Testing

/// `ferry diff`'s comparison: what it reports, and that it keeps only keys and digests of the first source.
@Suite struct RecordDiffTests {
    /// Records from memory; each reading can see other records (a source written between two readings).
    final class ListSource: ChangeSource {
        var readings: [[Record]]
        private(set) var reads = 0

        init(_ readings: [[Record]]) { self.readings = readings }

        var kind: String { "test" }
        var description: String { "list" }
        var fingerprint: String { "list" }
        var assets: (any AssetProvider)? { nil }

        func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
            let records = readings[min(reads, readings.count - 1)]
            reads += 1
            for (index, record) in records.enumerated() { try body(SourceChange(.record(record), origin: "#\(index)")) }
        }
    }

    private func car(_ name: String, zone: String = "CarZone", mileage: Int64 = 1) -> Record {
        Record(recordType: "Car", recordName: "Car.\(name)", zoneID: ZoneID(zoneName: zone), fields: ["mileage": .int64(mileage)])
    }

    @Test func reportsEachKindOfDifferenceAndNamesThoseOnlyInTheFirstInOrder() throws {
        let first = ListSource([[car("b"), car("same"), car("changed"), car("a", zone: "AZone")]])
        let second = ListSource([[car("same"), car("changed", mileage: 2), car("new")]])
        var reported: [RecordDiff.Difference] = []
        let summary = try RecordDiff.compare(first, second) { reported.append($0) }
        #expect(summary.first == 4 && summary.second == 3)
        #expect(summary.identical == 1 && summary.differing == 1 && summary.onlyInSecond == 1 && summary.onlyInFirst == 2)
        #expect(
            reported == [
                .differs(car("changed").id, recordType: "Car"), .onlyInSecond(car("new").id, recordType: "Car"),
                .onlyInFirst(car("a", zone: "AZone").id, recordType: "Car"), .onlyInFirst(car("b").id, recordType: "Car"),
            ])
        #expect(first.reads == 2, "the names of those only in the first are read again")
        let same = ListSource([[car("x")]])
        #expect(try RecordDiff.compare(same, ListSource([[car("x")]])) { _ in }.isIdentical)
        #expect(same.reads == 1, "nothing only in the first: one reading")
    }

    @Test func aFirstSourceThatChangesBetweenItsReadingsIsAnError() {
        let first = ListSource([[car("a"), car("b")], [car("b"), car("a")]])
        #expect {
            _ = try RecordDiff.compare(first, ListSource([[]])) { _ in }
        } throws: { error in
            (error as? TransferError)?.code == .sourceChanged && (error as? TransferError)?.kind == .temporary
        }
    }
}
