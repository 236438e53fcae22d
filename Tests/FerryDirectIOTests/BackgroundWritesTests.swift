import FerryCore
import FerryDirectIO
import FerryTesting
import Foundation
import Testing

/// Output files that write in the background, around the page cache where they can: the same bytes as plain writes,
/// whatever the sizes of the writes and wherever the file is, and failures reported to the caller.
@Suite struct BackgroundWritesTests {
    /// Deterministic bytes, different at every offset.
    private static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// Writes `pieces` (sizes) of a stream, flushing after the pieces listed, and returns what the file then holds.
    private func written(
        _ pieces: [Int], flushingAfter flushes: Set<Int> = [], in directory: String, background: Bool, direct: Bool, bufferSize: Int
    ) throws -> [UInt8] {
        let path = "\(directory)/out-\(background)-\(direct)-\(UUID().uuidString)"
        let file = try OutputFile(path: path, exclusive: true, bufferSize: bufferSize, writesInBackground: background, direct: direct)
        for (index, size) in pieces.enumerated() {
            try Self.bytes(size, seed: UInt64(index + 1)).withUnsafeBytes { try file.write($0) }
            if flushes.contains(index) { try file.flush() }
        }
        try file.close()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private static let patterns: [(pieces: [Int], flushes: Set<Int>)] = [
        ([], []),
        ([1], []),
        ([4096], []),
        ([65_536, 65_536], []),
        ([3, 70_000, 1, 200_000, 4095, 4097, 65_535], []),
        // One write much larger than every buffer.
        ([10, 1_000_000, 7], []),
        // A flush in the middle leaves the file at an unaligned size: writes go on through the page cache.
        ([5000, 70_000, 131_072, 12], [0, 2]),
        ([65_536, 65_536, 100], [1]),
    ]

    @Test(arguments: [false, true])
    func writesTheSameBytesAsPlainWrites(direct: Bool) throws {
        let scratch = try Scratch()
        for pattern in Self.patterns {
            let expected = pattern.pieces.enumerated().flatMap { Self.bytes($0.element, seed: UInt64($0.offset + 1)) }
            let plain = try written(
                pattern.pieces, flushingAfter: pattern.flushes, in: scratch.path, background: false, direct: false, bufferSize: 65_536)
            let background = try written(
                pattern.pieces, flushingAfter: pattern.flushes, in: scratch.path, background: true, direct: direct, bufferSize: 65_536)
            #expect(plain == expected, "\(pattern.pieces)")
            #expect(background == expected, "\(pattern.pieces) direct: \(direct)")
        }
    }

    @Test func writesTheSameBytesOnTmpfs() throws {
        // tmpfs refuses O_DIRECT when the file is opened before Linux 6.6, and takes it since: either way, same bytes.
        guard FileManager.default.fileExists(atPath: "/dev/shm") else {
            print("skipping: no /dev/shm")
            return
        }
        let directory = "/dev/shm/ferry-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pieces = [70_000, 131_072, 5]
        let expected = pieces.enumerated().flatMap { Self.bytes($0.element, seed: UInt64($0.offset + 1)) }
        #expect(try written(pieces, in: directory, background: true, direct: true, bufferSize: 65_536) == expected)
    }

    @Test func aFailedWriteIsReportedAndNothingAfterItIsWritten() throws {
        // /dev/full refuses O_DIRECT when opened (so the file falls back to the page cache), then every write (ENOSPC).
        let file = try OutputFile(path: "/dev/full", bufferSize: 4096, writesInBackground: true, direct: true)
        var failure: CoreError?
        do {
            for _ in 0..<16 { try Self.bytes(4096, seed: 1).withUnsafeBytes { try file.write($0) } }
            try file.close()
        } catch let error as CoreError {
            failure = error
        }
        let error = try #require(failure)
        #expect(error.code == .writeFailed)
        #expect(error.message.contains("/dev/full: write failed"))
        #expect(error.message.contains("free some space"))
    }

    @Test func anAtomicFileWrittenInTheBackgroundAppearsWhole() throws {
        let scratch = try Scratch()
        let path = scratch.file("bundle.bin")
        let output = try AtomicOutputFile(path: path, writesInBackground: true, direct: true)
        let expected = Self.bytes(3 << 20 | 123, seed: 9)
        try expected.withUnsafeBytes { try output.file.write($0) }
        #expect(!FileManager.default.fileExists(atPath: path))
        try output.commit()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == expected)
    }
}
