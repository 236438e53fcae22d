import FerryCore
import FerryTesting
import Foundation
import Synchronization
import Testing

/// Reading a file's ranges ahead on a thread of its own: the same bytes, in the ranges' order, a chunk never spanning
/// two ranges; errors reach the caller; stopping early leaves nothing running.
@Suite struct ReadAheadTests {
    /// Hands out ranges one by one from the read-ahead thread.
    private final class Ranges: Sendable {
        private let remaining: Mutex<[(offset: Int64, length: Int64)]>
        private let failure: Bool
        init(_ ranges: [(offset: Int64, length: Int64)], thenFail failure: Bool = false) {
            remaining = Mutex(ranges)
            self.failure = failure
        }
        func next() throws -> (offset: Int64, length: Int64)? {
            if let range = remaining.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return range }
            if failure { throw CoreError(.readFailed, "no more ranges") }
            return nil
        }
    }

    private static func file(_ scratch: Scratch, bytes count: Int) throws -> (path: String, bytes: [UInt8]) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let path = scratch.file("data.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    @Test func readsTheRangesBytesInOrderInFullChunks() throws {
        let scratch = try Scratch()
        let (path, bytes) = try Self.file(scratch, bytes: 300_000)
        let ranges: [(offset: Int64, length: Int64)] = [(250_000, 50_000), (0, 10), (10, 0), (1_000, 100_000), (299_999, 1)]
        let source = Ranges(ranges)
        let ahead = ReadAhead(path: path, chunkSize: 4096, depth: 3, ranges: { try source.next() })
        var chunks: [[UInt8]] = []
        while let chunk = try ahead.next() { chunks.append(Array(chunk)) }
        #expect(try ahead.next() == nil)
        let expected = ranges.flatMap { bytes[Int($0.offset)..<Int($0.offset + $0.length)] }
        #expect(chunks.flatMap { $0 } == expected)
        // Every chunk but the last is full, however small the ranges.
        #expect(chunks.dropLast().allSatisfy { $0.count == 4096 })
        #expect(chunks.last.map { !$0.isEmpty && $0.count <= 4096 } == true)
    }

    @Test func manySmallRangesTakeFewChunks() throws {
        let scratch = try Scratch()
        let (path, bytes) = try Self.file(scratch, bytes: 100_000)
        var ranges: [(offset: Int64, length: Int64)] = []
        for index in 0..<10_000 {
            let offset: Int = (index * 7_919) % 99_990
            ranges.append((Int64(offset), Int64(1 + index % 9)))
        }
        let source = Ranges(ranges)
        let ahead = ReadAhead(path: path, chunkSize: 1 << 16, ranges: { try source.next() })
        var chunks = 0
        var read: [UInt8] = []
        while let chunk = try ahead.next() {
            chunks += 1
            read += chunk
        }
        var expected: [UInt8] = []
        for range in ranges { expected += bytes[Int(range.offset)..<Int(range.offset + range.length)] }
        #expect(read == expected)
        let chunkSize = 1 << 16
        #expect(chunks == (read.count + chunkSize - 1) / chunkSize)
    }

    @Test func readsAndSkipsTheRangesAsOneStream() throws {
        let scratch = try Scratch()
        let (path, bytes) = try Self.file(scratch, bytes: 50_000)
        let ranges: [(offset: Int64, length: Int64)] = [(40_000, 9_000), (3, 5), (100, 20_000)]
        let stream = ranges.flatMap { bytes[Int($0.offset)..<Int($0.offset + $0.length)] }
        let source = Ranges(ranges)
        let ahead = ReadAhead(path: path, chunkSize: 4096, ranges: { try source.next() })
        var buffer = [UInt8](repeating: 0, count: 3_000)
        var read: [UInt8] = []
        // Reads of odd sizes across chunk and range ends, a pass over some bytes, then the rest.
        while read.count < 12_000 {
            let count = try buffer.withUnsafeMutableBytes {
                try ahead.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<min(3_000, 12_000 - read.count)]))
            }
            #expect(count > 0)
            read += buffer[..<count]
        }
        try ahead.skip(5_000)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try ahead.read(into: $0) }
            if count == 0 { break }
            read += buffer[..<count]
        }
        #expect(read == Array(stream[..<12_000]) + Array(stream[17_000...]))
        #expect(throws: CoreError.self) { try ahead.skip(1) }
    }

    @Test func reportsAFailureAfterTheBytesBeforeIt() throws {
        let scratch = try Scratch()
        let (path, _) = try Self.file(scratch, bytes: 10_000)
        // A range past the end of the file, then a source that fails.
        let pastTheEnd = Ranges([(0, 100), (9_000, 5_000)])
        let ahead = ReadAhead(path: path, chunkSize: 4096, ranges: { try pastTheEnd.next() })
        #expect(try ahead.next()?.count == 100)
        #expect(throws: CoreError.self) {
            while try ahead.next() != nil {}
        }
        let failing = Ranges([(0, 10)], thenFail: true)
        let second = ReadAhead(path: path, ranges: { try failing.next() })
        #expect(try second.next()?.count == 10)
        #expect(throws: CoreError.self) { try second.next() }
    }

    @Test func stopsEarlyWithoutWaitingForTheRest() throws {
        let scratch = try Scratch()
        let (path, bytes) = try Self.file(scratch, bytes: 1 << 20)
        let source = Ranges(Array(repeating: (0, 1 << 20), count: 1000))
        let ahead = ReadAhead(path: path, chunkSize: 1 << 16, depth: 2, ranges: { try source.next() })
        #expect(try ahead.next().map(Array.init) == Array(bytes[0..<(1 << 16)]))
        ahead.cancel()
        #expect(try ahead.next() == nil)
    }
}
