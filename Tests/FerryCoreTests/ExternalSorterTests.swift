import FerryCore
import FerryTesting
import Testing

@Suite struct ExternalSorterTests {
    @Test(arguments: [1 << 30, 8 << 10, 100 << 10])
    func sortsLikeAnArrayInAnyMemory(limit: Int) throws {
        let scratch = try Scratch()
        var generator = SeededGenerator(seed: UInt64(limit))
        // Few distinct values, so equal values meet across runs.
        let values = (0..<20_000).map { _ in generator.next() % 5_000 }
        let sorter = ExternalSorter<UInt64>(memoryLimit: limit, prefix: "test-runs", temporaryDirectory: scratch.path)
        for value in values.prefix(15_000) { try sorter.append(value) }
        var first: [UInt64] = []
        try sorter.forEachSorted { first.append($0) }
        #expect(first == values.prefix(15_000).sorted())
        // More values after a pass, and a second pass over everything.
        for value in values.dropFirst(15_000) { try sorter.append(value) }
        var second: [UInt64] = []
        try sorter.forEachSorted { second.append($0) }
        #expect(second == values.sorted())
        #expect(sorter.spilled == (limit < 1 << 20))
        #expect(scratch.listing().isEmpty == !sorter.spilled, "runs are scratch files only when the values do not fit")
        sorter.reset()
        #expect(scratch.listing().isEmpty, "reset removes the runs")
        var none = 0
        try sorter.forEachSorted { _ in none += 1 }
        #expect(none == 0)
    }
}
