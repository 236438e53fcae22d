import FerryBackend
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
        /// Records handed out, over all readings.
        private(set) var delivered = 0

        /// A pause after every thousand records handed out (a slow source).
        var pause: Duration = .zero

        init(_ readings: [[Record]]) { self.readings = readings }

        var kind: String { "test" }
        var description: String { "list" }
        var fingerprint: String { "list" }
        var assets: (any AssetProvider)? { nil }

        func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
            let records = readings[min(reads, readings.count - 1)]
            reads += 1
            for (index, record) in records.enumerated() {
                delivered += 1
                if pause > .zero, delivered % 1000 == 0 { Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18) }
                try body(SourceChange(.record(record), origin: "#\(index)"))
            }
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

    /// A source that fails after some records.
    final class FailingSource: ChangeSource {
        struct Broken: Error, Equatable { let side: String }
        let side: String
        let records: Int
        private(set) var delivered = 0

        init(_ side: String, after records: Int) {
            self.side = side
            self.records = records
        }

        var kind: String { "test" }
        var description: String { side }
        var fingerprint: String { side }
        var assets: (any AssetProvider)? { nil }

        func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
            for index in 0..<records {
                delivered += 1
                try body(SourceChange(.record(Record(recordType: "Car", recordName: "Car.\(index)", zoneID: .default)), origin: "#\(index)"))
            }
            throw Broken(side: side)
        }
    }

    /// The two sources are read side by side: either one's failure is the comparison's, and stops the other side's
    /// reading at its next record.
    @Test func eitherSourceFailingStopsTheComparisonWithItsError() throws {
        let endless = (0..<200_000).map { car("\($0)") }
        #expect(throws: FailingSource.Broken(side: "first")) {
            _ = try RecordDiff.compare(FailingSource("first", after: 10), ListSource([endless])) { _ in }
        }
        let longFirst = ListSource([endless])
        // Slow enough (1 s in all) that the second side has failed long before it ends.
        longFirst.pause = .milliseconds(5)
        #expect(throws: FailingSource.Broken(side: "second")) {
            _ = try RecordDiff.compare(longFirst, FailingSource("second", after: 10)) { _ in }
        }
        #expect(longFirst.delivered < endless.count, "the first side stopped once the second failed")
        // Both fail: the error of the side that failed first (whichever that was), never the other's cancellation.
        #expect {
            _ = try RecordDiff.compare(FailingSource("first", after: 1000), FailingSource("second", after: 10)) { _ in }
        } throws: { error in
            error is FailingSource.Broken
        }
    }

    /// Records given as lines of CloudKit JSON (a database's feed), in pages, with deletions among them.
    final class LinesSource: LineChangeSource {
        let lines: [[UInt8]?]
        init(_ lines: [[UInt8]?]) { self.lines = lines }

        var kind: String { "lines" }
        var description: String { "lines" }
        var fingerprint: String { "lines" }
        var assets: (any AssetProvider)? { nil }
        var readsLines: Bool { true }

        /// What the lines decode to, as a source of records gives them (`nil` entries are deletions).
        func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
            for (index, line) in lines.enumerated() {
                guard let line, case .record(let record) = try CloudKitJSONDecoder().decode(bytes: line) else { continue }
                try body(SourceChange(.record(record), origin: "#\(index)"))
            }
        }

        func forEachLinePage(_ body: (ChangeLines) throws -> Void) throws {
            for start in stride(from: 0, to: lines.count, by: 3) {
                var bytes: [UInt8] = []
                var entries: [LinePage.Entry] = []
                for line in lines[start..<min(start + 3, lines.count)] {
                    if let line {
                        bytes += line
                        entries.append(.line(end: bytes.count))
                    } else {
                        entries.append(.deletion(Deletion(recordType: "Car", recordName: "Car.gone", zoneID: ZoneID(zoneName: "CarZone"))))
                    }
                }
                try body(ChangeLines(LinePage(bytes: bytes, entries: entries, syncToken: SyncToken("t"), moreComing: false), origin: "page"))
            }
        }
    }

    /// A source read as lines is compared by its lines' content, whatever their key order, spacing and system fields, a
    /// line the transcoder declines (an escaped field name) decoded the full way, deletions left out.
    @Test func aSourceOfLinesIsComparedByItsContent() throws {
        let zone = #"{"zoneName":"CarZone","ownerRecordName":"__defaultOwner__"}"#
        func line(_ text: String) -> [UInt8] { Array(text.utf8) }
        let lines: [[UInt8]?] = [
            line(
                #"{"recordType":"Car","fields":{"mileage": {"value": 1, "type": "INT64"}},"recordName":"Car.a","zoneID":\#(zone),"#
                    + #""recordChangeTag":"x"}"#),
            nil,
            line(
                #"{"recordName":"Car.b","recordType":"Car","zoneID":\#(zone),"fields":{"mileage":{"type":"INT64","value":2}},"#
                    + #""created":{"timestamp":5}}"#),
            line(#"{"recordName":"Car.c","recordType":"Car","zoneID":\#(zone),"fields":{"mile\u0061ge":{"type":"INT64","value":3}}}"#),
            line(#"{"recordName":"Car.d","recordType":"Car","zoneID":\#(zone),"fields":{"mileage":{"type":"INT64","value":4}}}"#),
        ]
        let records = [car("a", mileage: 1), car("b", mileage: 2), car("c", mileage: 3), car("d", mileage: 4)]
        let same = try RecordDiff.compare(LinesSource(lines), ListSource([records])) { _ in }
        #expect(same.isIdentical && same.first == 4 && same.identical == 4, "\(same)")
        var reported: [RecordDiff.Difference] = []
        let changed = try RecordDiff.compare(ListSource([records.dropLast() + [car("d", mileage: 5)]]), LinesSource(lines)) { reported.append($0) }
        #expect(changed.differing == 1 && changed.identical == 3)
        #expect(reported == [.differs(car("d").id, recordType: "Car", fields: [.init(name: "mileage", first: "5", second: "4")])])
        // A line that does not decode stops the comparison, named.
        let damaged = lines + [line(#"{"recordName":"Car.e","recordType":"Car","zoneID":\#(zone),"fields":{"n":{"type":"NOPE","value":1}}}"#)]
        #expect {
            _ = try RecordDiff.compare(LinesSource(damaged), ListSource([records])) { _ in }
        } throws: { error in
            (error as? BackendError)?.code == .damaged && "\(error)".contains("record Car.e") && "\(error)".contains("ferry verify")
        }
    }
}
