import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct DuplicateKeyFinderTests {
    /// The answer a set of every key gives: each later occurrence with its first.
    private func reference(_ keys: [RecordKey]) -> [(first: Int64, again: Int64)] {
        var firsts: [RecordKey: Int64] = [:]
        var found: [(first: Int64, again: Int64)] = []
        for (position, key) in keys.enumerated() {
            if let first = firsts[key] { found.append((first, Int64(position))) } else { firsts[key] = Int64(position) }
        }
        return found
    }

    private func keys(count: Int, repeating every: Int) -> [RecordKey] {
        (0..<count).map { index in
            // Every `every`-th key repeats one from far back (another run), some three times.
            let name = index % every == every - 1 ? "Car.\((index * 7) % (index / 2 + 1))" : "Car.\(index)"
            return RecordKey(zoneName: "CarZone", ownerName: ZoneID.defaultOwnerName, recordName: name)
        }
    }

    @Test(arguments: [1 << 30, 24 * 1024, 24 * 3000])
    func findsWhatASetFinds(memoryLimit: Int) throws {
        let scratch = try Scratch()
        let keys = keys(count: 20_000, repeating: 97)
        var finder: DuplicateKeyFinder? = DuplicateKeyFinder(memoryLimit: memoryLimit, temporaryDirectory: scratch.path)
        for (position, key) in keys.enumerated() { try finder?.insert(key, at: Int64(position)) }
        // Runs go to scratch files only when the keys do not fit, and go away once the duplicates are known.
        #expect(scratch.listing().isEmpty == (memoryLimit >= 1 << 20))
        let found = try finder?.duplicates() ?? []
        let expected = reference(keys)
        #expect(!expected.isEmpty)
        #expect(found.map(\.first) == expected.map(\.first))
        #expect(found.map(\.again) == expected.map(\.again))
        #expect(scratch.listing().isEmpty)
        finder = nil
    }

    @Test func noRepeatsNoFindings() throws {
        let finder = DuplicateKeyFinder(memoryLimit: 24 * 1024, temporaryDirectory: nil)
        for index in 0..<5000 {
            try finder.insert(RecordKey(zoneName: "Z", ownerName: "o", recordName: "r\(index)"), at: Int64(index))
        }
        #expect(try finder.duplicates().isEmpty)
    }
}
