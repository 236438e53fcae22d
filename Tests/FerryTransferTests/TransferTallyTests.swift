import FerryRecords
import FerryTesting
import Testing

@testable import FerryTransfer

/// A copy's counts per record type and zone are the same whether they stay in memory or go to a scratch file.
@Suite struct TransferTallyTests {
    struct Counted: Equatable {
        var type: String
        var zone: String
        var row: TransferTally.Row
    }

    private func rows(memoryRows: Int, in scratch: Scratch) throws -> (rows: [Counted], total: TransferTally.Row) {
        var tally = TransferTally(temporaryDirectory: scratch.path, memoryRows: memoryRows)
        var generator = SeededGenerator(seed: 9)
        let outcomes: [TransferOutcome] = [.created, .updated, .unchanged, .absent, .kept(reason: "x"), .rejected(code: "c", reason: "r"), .resumed]
        // 50 zones of two types and deletions, in runs that come back to earlier zones.
        for step in 0..<3_000 {
            let zone = ZoneID(zoneName: "Z\(Int(generator.next() % 50))")
            var change: RecordChange =
                step % 7 == 0
                ? .deletion(Deletion(recordType: "Car", recordName: "D\(step)", zoneID: zone))
                : .record(Record(recordType: step % 2 == 0 ? "Car" : "Note", recordName: "R\(step)", zoneID: zone, fields: [:]))
            let outcome: TransferOutcome = change.isDeletion ? .deleted : outcomes[Int(generator.next() % UInt64(outcomes.count))]
            for _ in 0..<Int(generator.next() % 3 + 1) { try tally.count(&change, outcome) }
        }
        var counted: [Counted] = []
        try tally.forEachRow { counted.append(Counted(type: $0, zone: $1, row: $2)) }
        return (counted, tally.total)
    }

    @Test func rowsInAScratchFileAddUpAsInMemory() throws {
        let scratch = try Scratch()
        let roomy = try rows(memoryRows: 4096, in: scratch)
        let tight = try rows(memoryRows: 3, in: scratch)
        #expect(tight.rows == roomy.rows)
        #expect(tight.total == roomy.total)
        #expect(roomy.rows.count == 150)
        #expect(roomy.rows.reduce(0) { $0 + $1.row.read } == roomy.total.read)
        #expect(roomy.rows.first?.type == "(deletions)", "types in first-seen order: step 0 is a deletion")
        // Each type's rows together, its zones by name: the same table whatever order the zones came in.
        #expect(roomy.rows.map(\.type) == ["(deletions)", "Note", "Car"].flatMap { Array(repeating: $0, count: 50) }, "\(roomy.rows.map(\.type))")
        for type in ["(deletions)", "Car", "Note"] {
            let zones = roomy.rows.filter { $0.type == type }.map(\.zone)
            #expect(zones == zones.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        }
    }
}
