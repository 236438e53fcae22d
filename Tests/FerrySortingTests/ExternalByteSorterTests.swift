import FerryCore
import FerrySorting
import FerryTesting
import Foundation
import Testing

/// Byte records sort in bounded memory as they would in memory, and their fields read back as written.
@Suite struct ExternalByteSorterTests {
    /// Records of random lengths and bytes (0 and 1 among them, which keys escape).
    static func records(count: Int, seed: UInt64) -> [[UInt8]] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in
            (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next() % 5 == 0 ? generator.next() % 3 : generator.next())
            }
        }
    }

    private func sorted(_ sorter: ExternalByteSorter) throws -> [[UInt8]] {
        var result: [[UInt8]] = []
        try sorter.forEachSorted { result.append(Array($0)) }
        return result
    }

    @Test(arguments: [1 << 20, 4096])
    func sortsAsInMemory(memoryLimit: Int) throws {
        let scratch = try Scratch()
        let records = Self.records(count: 3000, seed: 7)
        let sorter = ExternalByteSorter(memoryLimit: memoryLimit, prefix: "ferry-test", temporaryDirectory: scratch.path)
        for record in records { try sorter.append(record) }
        let expected = records.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try sorted(sorter) == expected)
        #expect(sorter.spilled == (memoryLimit == 4096))
        // Again, and with more appended between.
        try sorter.append([0])
        #expect(try sorted(sorter) == ([[0]] + expected).sorted { $0.lexicographicallyPrecedes($1) })
        #expect(sorter.count == records.count + 1)
        sorter.reset()
        #expect(try sorted(sorter).isEmpty)
        #expect(scratch.listing().isEmpty, "reset removes the runs")
    }

    @Test func keysOrderAsTheirFieldsInTurn() throws {
        let names = ["", "a", "a\u{0}", "a\u{1}", "a\u{2}", "ab", "b", "\u{0}", "\u{1}z", "é"]
        var pairs: [(String, String, Int64)] = []
        for first in names { for second in names.prefix(4) { for number in [Int64.min, -1, 0, 7, .max] { pairs.append((first, second, number)) } } }
        let encoded = pairs.map { pair -> [UInt8] in
            var record = ByteRecordWriter()
            record.key(pair.0)
            record.key(pair.1)
            record.int64(pair.2)
            return record.bytes
        }
        let byBytes = zip(pairs, encoded).sorted { $0.1.lexicographicallyPrecedes($1.1) }.map(\.0)
        let byFields = pairs.sorted { a, b in
            if a.0 != b.0 { return a.0.utf8.lexicographicallyPrecedes(b.0.utf8) }
            if a.1 != b.1 { return a.1.utf8.lexicographicallyPrecedes(b.1.utf8) }
            return a.2 < b.2
        }
        #expect(byBytes.map { "\($0)" } == byFields.map { "\($0)" })
        for (pair, bytes) in zip(pairs, encoded) {
            let decoded = try bytes.withUnsafeBytes { raw in
                var reader = ByteRecordReader(raw)
                return (try reader.key(), try reader.key(), try reader.int64(), reader.isAtEnd)
            }
            #expect(decoded.0 == pair.0 && decoded.1 == pair.1 && decoded.2 == pair.2 && decoded.3)
        }
    }

    @Test func aShortRecordOrFileIsAnErrorNotATrap() throws {
        var record = ByteRecordWriter()
        record.text("abc")
        record.uint32(7)
        let cut = try Array(record.bytes.dropLast()).withUnsafeBytes { raw in
            var reader = ByteRecordReader(raw)
            let text = try reader.text()
            return (text, Result { try reader.uint32() })
        }
        #expect(cut.0 == "abc")
        #expect(throws: CoreError.self) { try cut.1.get() }
        let scratch = try Scratch()
        let file = try ByteRecordFile(path: scratch.file("records"))
        try file.append([1, 2, 3])
        try file.append(Array(repeating: 9, count: 100_000))
        var lengths: [Int] = []
        try file.forEach { lengths.append($0.count) }
        #expect(lengths == [3, 100_000], "a record longer than the reader's buffer")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try bytes.prefix(bytes.count - 1).write(to: URL(fileURLWithPath: scratch.file("cut")))
        let reader = try ByteRecordFile.Reader(path: scratch.file("cut"))
        #expect(try reader.next()?.count == 3)
        #expect(throws: CoreError.self) { try reader.next() }
    }
}
