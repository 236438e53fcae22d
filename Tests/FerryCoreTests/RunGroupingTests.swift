import Testing

@testable import FerryCore

@Suite struct RunGroupingTests {
    @Test func groupsEqualDictionaryGroupingInFirstSeenOrder() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            // Runs of equal keys, with keys coming back after others, as a round's zones do.
            var keys: [String] = []
            for _ in 0..<Int.random(in: 0..<12, using: &generator) {
                let key = "zone\(Int.random(in: 0..<4, using: &generator))"
                keys += Array(repeating: key, count: Int.random(in: 1..<6, using: &generator))
            }
            let groups = keys.indices.groupedInRuns { keys[$0] }
            let expected = Dictionary(grouping: keys.indices, by: { keys[$0] })
            #expect(groups.count == expected.count)
            for group in groups { #expect(group.elements == expected[group.key]) }
            var firstSeen: [String] = []
            for key in keys where !firstSeen.contains(key) { firstSeen.append(key) }
            #expect(groups.map(\.key) == firstSeen)
        }
    }

    @Test func anEmptyCollectionHasNoGroups() {
        #expect([Int]().groupedInRuns { $0 }.isEmpty)
    }

    @Test func slicesGroupTheirOwnIndices() {
        let values = [1, 1, 2, 2, 1, 3]
        let groups = values[2...].indices.groupedInRuns { values[$0] }
        #expect(groups.map(\.key) == [2, 1, 3])
        #expect(groups.map(\.elements) == [[2, 3], [4], [5]])
    }
}
