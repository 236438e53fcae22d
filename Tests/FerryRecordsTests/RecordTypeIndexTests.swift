import FerryRecords
import Testing

/// Numbers for record types, as the bundle writer's ledger keeps them.
@Suite struct RecordTypeIndexTests {
    @Test("each type keeps its first number, however many types alternate")
    func numbersAreStable() {
        var index = RecordTypeIndex()
        let types = (0..<7).map { "Type\($0)" } + ["AVeryLongRecordTypeNameIndeed"]
        for type in types { _ = index.index(of: type) }
        // Alternating over more types than the recent ones it remembers, in both directions.
        for round in 0..<3 {
            for (number, type) in (round % 2 == 0 ? Array(types.enumerated()) : types.enumerated().reversed()) {
                #expect(index.index(of: type) == Int32(number), "\(type)")
            }
        }
        #expect(index.names == types)
    }
}
