import FerryCore
import FerrySorting
import FerryTesting
import Testing

@Suite struct SortedByteTableTests {
    /// Keys of varied lengths with bytes 0 and 255 in them, sorted byte by byte, each with a value of its own length.
    static func entries(count: Int) -> [(key: [UInt8], value: [UInt8])] {
        var generator = SeededGenerator(seed: 11)
        var keys = Set<[UInt8]>()
        while keys.count < count {
            let length = Int(generator.next() % 40)
            keys.insert((0..<length).map { _ in [0, 1, 97, 98, 255][Int(generator.next() % 5)] })
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }.map { key in (key, Array(repeating: UInt8(key.count), count: key.count % 7 * 300)) }
    }

    private func build(_ entries: [(key: [UInt8], value: [UInt8])], limit: Int, in scratch: Scratch) throws -> SortedByteTable {
        var builder = SortedByteTable.Builder(prefix: "test-table", temporaryDirectory: scratch.path, memoryLimit: limit)
        for entry in entries { try builder.append(key: entry.key, value: entry.value) }
        return try builder.finish()
    }

    /// The same answers whether the table stays in memory or goes to a file of many blocks.
    @Test(arguments: [1 << 30, 0, 5_000])
    func findsEveryEntryAndNothingElseInAnyMemory(limit: Int) throws {
        let scratch = try Scratch()
        let entries = Self.entries(count: 3_000)
        let table = try build(entries, limit: limit, in: scratch)
        #expect(table.count == entries.count)
        #expect(scratch.listing().isEmpty == (limit > 1 << 20), "only a table past its limit has a scratch file")
        // Every key found with its rank and value, in a shuffled order (other blocks than the one read last).
        var generator = SeededGenerator(seed: 3)
        for rank in entries.indices.shuffled(using: &generator) {
            let found = try table.find(entries[rank].key) { foundRank, value in (foundRank, Array(value)) }
            #expect(found?.0 == rank && found?.1 == entries[rank].value)
        }
        // Keys absent: before the first, after the last, and beside every key.
        let known = Set(entries.map(\.key))
        let last = [UInt8](repeating: 255, count: 44)
        let absent: [[UInt8]] = [last] + entries.flatMap { [$0.key + [0], $0.key + [2]] }
        for key in absent where !known.contains(key) {
            let found = try table.find(key) { _, _ in true }
            #expect(found == nil)
        }
        // Every entry visited in order, by forEach and by a cursor.
        var visited: [(Int, [UInt8], [UInt8])] = []
        try table.forEach { visited.append(($0, Array($1), Array($2))) }
        #expect(visited.map(\.0) == Array(entries.indices))
        #expect(visited.map(\.1) == entries.map(\.key) && visited.map(\.2) == entries.map(\.value))
        let cursor = table.makeCursor()
        var walked: [[UInt8]] = []
        while try cursor.next() { walked.append(cursor.currentKey) }
        #expect(walked == entries.map(\.key))
    }

    @Test func anEmptyTableHoldsNothing() throws {
        var builder = SortedByteTable.Builder(prefix: "test-table", temporaryDirectory: nil)
        let table = try builder.finish()
        #expect(table.count == 0)
        let found = try table.find([]) { _, _ in true }
        #expect(found == nil)
        let cursor = table.makeCursor()
        #expect(try !cursor.next())
    }

    @Test func keysOutOfOrderOrTwiceAreRefused() throws {
        var builder = SortedByteTable.Builder(prefix: "test-table", temporaryDirectory: nil)
        try builder.append(key: [2], value: [])
        for key: [UInt8] in [[2], [1, 9]] {
            var refused = false
            do { try builder.append(key: key, value: []) } catch is CoreError { refused = true }
            #expect(refused, "key \(key) after [2]")
        }
        try builder.append(key: [2, 0], value: [7])
        let rank = try builder.finish().find([2, 0]) { rank, _ in rank }
        #expect(rank == 1)
    }

    @Test func aBitSetHoldsItsMembers() {
        var set = BitSet(capacity: 130)
        let inserted = [0, 64, 129, 64].map { set.insert($0) }
        #expect(inserted == [true, true, true, false])
        #expect(set.contains(0) && set.contains(129) && !set.contains(1) && !set.contains(130) && !set.contains(-1))
    }
}
