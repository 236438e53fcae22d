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
                .differs(car("changed").id, recordType: "Car", fields: [.init(name: "mileage", first: "1", second: "2")]),
                .onlyInSecond(car("new").id, recordType: "Car"),
                .onlyInFirst(car("a", zone: "AZone").id, recordType: "Car"), .onlyInFirst(car("b").id, recordType: "Car"),
            ])
        #expect(first.reads == 2, "the names of those only in the first, and the first side of those that differ, in one reading")
        let same = ListSource([[car("x")]])
        #expect(try RecordDiff.compare(same, ListSource([[car("x")]])) { _ in }.isIdentical)
        #expect(same.reads == 1, "nothing only in the first: one reading")
    }

    @Test func comparesSourcesLargerThanItsMemoryThroughScratchRuns() throws {
        let cars = (0..<5000).map { car("\($0)", zone: "Zone\($0 % 7)", mileage: Int64($0)) }
        var shuffled = cars
        var generator = SeededGenerator(seed: 7)
        shuffled.shuffle(using: &generator)
        // One record changed, one gone, one new, and a key twice in the second.
        let changed = try #require(shuffled.firstIndex { $0.recordName == "Car.10" })
        shuffled[changed] = car("10", zone: "Zone3", mileage: -1)
        shuffled.removeAll { $0.recordName == "Car.20" }
        shuffled.append(car("new"))
        shuffled.append(cars[30])
        let scratch = try Scratch()
        var reported: [RecordDiff.Difference] = []
        let summary = try RecordDiff.compare(
            ListSource([cars]), ListSource([shuffled]), temporaryDirectory: scratch.path, memoryLimit: 64 << 10
        ) { reported.append($0) }
        #expect(summary.first == 5000 && summary.second == 5001)
        #expect(summary.differing == 1 && summary.onlyInFirst == 1 && summary.onlyInSecond == 2 && summary.identical == 4998)
        #expect(reported.count == 4)
        #expect(
            reported.contains(.differs(car("10", zone: "Zone3").id, recordType: "Car", fields: [.init(name: "mileage", first: "10", second: "-1")])))
        #expect(reported.filter { $0 == .onlyInSecond(cars[30].id, recordType: "Car") }.count == 1, "the later of the two")
        #expect(reported.contains(.onlyInSecond(car("new").id, recordType: "Car")))
        #expect(reported.contains(.onlyInFirst(car("20", zone: "Zone6").id, recordType: "Car")))
        #expect(scratch.listing().isEmpty, "the scratch runs are removed")
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
