import FerryCore
import FerrySorting
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

    /// Values sorted by their prefixes first come out exactly as a comparison sort gives them, whether the prefixes
    /// are spread (hashes), clustered in a few buckets, or all equal; in memory and across many runs (the heap merge).
    @Test(arguments: [1 << 30, 8 << 10, 1 << 10])
    func prefixSortMatchesComparisonSort(limit: Int) throws {
        struct Pair: Comparable, BitwiseCopyable {
            var prefix: UInt64
            var rest: UInt64
            static func < (lhs: Pair, rhs: Pair) -> Bool { (lhs.prefix, lhs.rest) < (rhs.prefix, rhs.rest) }
        }
        let scratch = try Scratch()
        var generator = SeededGenerator(seed: UInt64(limit) &+ 7)
        let spreads: [(String, (inout SeededGenerator) -> UInt64)] = [
            ("spread", { $0.next() }),
            ("clustered", { ($0.next() % 3) << 62 | ($0.next() % 50) }),
            ("equal", { _ in 42 }),
        ]
        for (name, prefix) in spreads {
            let values = (0..<12_000).map { _ in Pair(prefix: prefix(&generator), rest: generator.next() % 1_000) }
            let sorter = ExternalSorter<Pair>(memoryLimit: limit, prefix: "test-prefix", temporaryDirectory: scratch.path, sortPrefix: \.prefix)
            for value in values { try sorter.append(value) }
            var sorted: [Pair] = []
            try sorter.forEachSorted { sorted.append($0) }
            #expect(sorted == values.sorted(), "\(name) prefixes, \(limit) bytes")
            #expect(sorter.spilled == (limit < 1 << 20))
            sorter.reset()
        }
    }

    /// Small inputs (below the bucketing threshold) and empty ones sort too.
    @Test func prefixSortOfFewValues() throws {
        let scratch = try Scratch()
        for count in [0, 1, 2, 63, 64, 65] {
            var generator = SeededGenerator(seed: UInt64(count))
            let values = (0..<count).map { _ in generator.next() }
            let sorter = ExternalSorter<UInt64>(prefix: "test-few", temporaryDirectory: scratch.path, sortPrefix: { $0 })
            for value in values { try sorter.append(value) }
            var sorted: [UInt64] = []
            try sorter.forEachSorted { sorted.append($0) }
            #expect(sorted == values.sorted(), "\(count) values")
        }
    }
}
