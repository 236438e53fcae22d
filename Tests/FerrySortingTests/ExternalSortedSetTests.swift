import FerryCore
import FerrySorting
import FerryTesting
import Testing

@Suite struct ExternalSortedSetTests {
    /// The same set, whether it stays in memory or goes to a file of many blocks (64 values is the smallest buffer).
    @Test(arguments: [1 << 30, 512])
    func answersLikeASetInAnyMemory(limit: Int) throws {
        let scratch = try Scratch()
        var generator = SeededGenerator(seed: 7)
        // Few distinct values, so values repeat within and across runs.
        let values = (0..<5_000).map { _ in generator.next() % 3_000 * 2 }
        let sorter = ExternalSorter<UInt64>(memoryLimit: limit, prefix: "test-set", temporaryDirectory: scratch.path)
        for value in values { try sorter.append(value) }
        var repeated: [UInt64] = []
        let set = try ExternalSortedSet(taking: sorter, prefix: "test-set", temporaryDirectory: scratch.path) { repeated.append($0) }
        let distinct = Set(values).sorted()
        #expect(set.count == distinct.count)
        #expect(repeated.count == values.count - distinct.count)
        #expect(repeated == repeated.sorted())
        var visited: [UInt64] = []
        try set.forEach { visited.append($0) }
        #expect(visited == distinct)
        // Every value present, and the odd ones around them absent: inside blocks, at their edges, before and after all.
        for value in distinct { #expect(try set.contains(value)) }
        for value in [0, 1, 5_999, 6_000, UInt64.max] + distinct.map({ $0 + 1 }) where !Set(distinct).contains(value) {
            #expect(try !set.contains(value))
        }
        #expect(scratch.listing().isEmpty == (limit > 1 << 20), "only a large set has a scratch file")
    }

    @Test func emptySetsHoldNothing() throws {
        let sorter = ExternalSorter<UInt64>(prefix: "test-set", temporaryDirectory: nil)
        let set = try ExternalSortedSet(taking: sorter, prefix: "test-set", temporaryDirectory: nil)
        #expect(set.count == 0)
        #expect(try !set.contains(0))
        #expect(try set.makeCursor().next() == nil)
        #expect(try !ExternalSortedSet<UInt64>().contains(1))
    }

    @Test func aCursorWalksBesideAnother() throws {
        let scratch = try Scratch()
        func set(_ values: some Sequence<UInt64>) throws -> ExternalSortedSet<UInt64> {
            let sorter = ExternalSorter<UInt64>(memoryLimit: 512, prefix: "test-set", temporaryDirectory: scratch.path)
            for value in values { try sorter.append(value) }
            return try ExternalSortedSet(taking: sorter, prefix: "test-set", temporaryDirectory: scratch.path)
        }
        let all = try set(0..<20_000)
        let some = try set(stride(from: 0, to: 20_000, by: 3))
        let cursor = some.makeCursor()
        var next = try cursor.next()
        var missing = 0
        try all.forEach { value in
            while let candidate = next, candidate < value { next = try cursor.next() }
            if next != value { missing += 1 }
        }
        #expect(missing == 20_000 - some.count)
    }
}

extension ExternalSortedSetTests {
    @Test(arguments: [1 << 30, 512])
    func findsTheFirstValueNotBelowAProbe(limit: Int) throws {
        let sorter = ExternalSorter<UInt64>(memoryLimit: limit, prefix: "test-set", temporaryDirectory: nil)
        let values = (0..<3_000).map { UInt64($0) * 10 + 5 }
        for value in values.reversed() { try sorter.append(value) }
        let set = try ExternalSortedSet(taking: sorter, prefix: "test-set", temporaryDirectory: nil, memoryLimit: limit)
        for probe in stride(from: UInt64(0), through: 30_010, by: 7) {
            #expect(try set.first(notBelow: probe) == values.first { $0 >= probe })
        }
    }
}
