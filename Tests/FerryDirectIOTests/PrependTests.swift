import FerryCore
import FerryDirectIO
import FerryTesting
import Foundation
import Testing

/// A file's head written last: put before what it holds, in place on ext4 and XFS and by a new file elsewhere, with the
/// same result either way.
@Suite struct PrependTests {
    /// Bytes that differ at every offset, so a shift by any amount shows.
    static func pattern(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) ^ seed })
    }

    /// Writes `body` (through background direct writes), prepends `head`, appends `tail`, commits; returns the file.
    private func written(body: Data, head: Data, tail: Data, bound: Int64, inPlace: Bool, in scratch: Scratch) throws -> Data {
        let path = scratch.file("out.bin")
        let output = try AtomicOutputFile(path: path, writesInBackground: true, direct: true)
        try output.file.write(body)
        let firstName = output.temporaryPath
        try output.prepend(atMost: bound, inPlace: inPlace) { file in
            try file.write(head)
            #expect(file.position == Int64(head.count))
        }
        // Not in place: a new temporary file took the old one's place (in place, the name stays where the filesystem
        // can shift blocks: ext4, XFS).
        if !inPlace { #expect(output.temporaryPath != firstName) }
        try output.file.write(tail)
        try output.commit()
        #expect(scratch.listing() == ["out.bin"], "no temporary file is left")
        return try scratch.read("out.bin")
    }

    @Test("the head goes before the body, and what is written after follows it", arguments: [true, false])
    func headGoesFirst(inPlace: Bool) throws {
        let scratch = try Scratch()
        // A body of several background buffers with a ragged end; a head of three units in a hole of far more.
        let body = Self.pattern((3 << 20) + 1234, seed: 1)
        let head = Self.pattern(3 * OutputFile.prependUnit, seed: 2)
        let tail = Self.pattern(5000, seed: 3)
        let file = try written(body: body, head: head, tail: tail, bound: 10 << 20, inPlace: inPlace, in: scratch)
        #expect(file.count == head.count + body.count + tail.count)
        let same = file == head + body + tail  // not in #expect: megabytes
        #expect(same, "the file is not head, body, tail")
    }

    @Test("a head that fills its bound exactly, and one of a single unit")
    func boundsAtTheEdges() throws {
        for (headUnits, bound) in [(2, Int64(2 * OutputFile.prependUnit)), (1, Int64(1))] {
            let scratch = try Scratch()
            let body = Self.pattern(70_000, seed: 4)
            let head = Self.pattern(headUnits * OutputFile.prependUnit, seed: 5)
            let bound = max(bound, Int64(head.count))
            let file = try written(body: body, head: head, tail: Data(), bound: bound, inPlace: true, in: scratch)
            #expect(file == head + body)
        }
    }

    @Test("a head of a length that is not a whole number of units, or over its bound, is refused", arguments: [true, false])
    func badHeadsAreRefused(inPlace: Bool) throws {
        for (length, bound) in [(OutputFile.prependUnit + 1, Int64(1 << 20)), (2 * OutputFile.prependUnit, Int64(OutputFile.prependUnit))] {
            let scratch = try Scratch()
            let path = scratch.file("out.bin")
            let output = try AtomicOutputFile(path: path, writesInBackground: true, direct: true)
            try output.file.write(Self.pattern(10_000, seed: 6))
            #expect {
                try output.prepend(atMost: bound, inPlace: inPlace) { file in try file.write(Self.pattern(length, seed: 7)) }
            } throws: { error in
                (error as? CoreError)?.code == .writeFailed
            }
            output.discard()
            #expect(scratch.listing().isEmpty, "\(scratch.listing())")
        }
    }

    @Test("trying whether the filesystem shifts blocks leaves the file empty; where it does, the head goes in place")
    func probeLeavesTheFileEmpty() throws {
        let scratch = try Scratch()
        let output = try AtomicOutputFile(path: scratch.file("out.bin"), writesInBackground: true, direct: true)
        let inPlace = try output.canPrependInPlace()
        let body = Self.pattern(9000, seed: 9)
        try output.file.write(body)
        let firstName = output.temporaryPath
        let head = Self.pattern(OutputFile.prependUnit, seed: 10)
        try output.prepend(atMost: 1 << 20) { try $0.write(head) }
        #expect((output.temporaryPath == firstName) == inPlace, "in place \(inPlace), yet the file was \(inPlace ? "" : "not ")replaced")
        try output.commit()
        #expect(try scratch.read("out.bin") == head + body)
    }

    @Test("bytes filled straight into the buffers are the bytes written", arguments: [true, false])
    func fillWritesWhatItIsGiven(background: Bool) throws {
        let scratch = try Scratch()
        let bytes = Self.pattern((2 << 20) + 777, seed: 8)
        let file = try OutputFile(path: scratch.file("f.bin"), writesInBackground: background)
        try file.write(bytes.prefix(3))
        var offset = 3
        // Filled a few bytes at a time at first (a reader that returns short counts), then as much as offered.
        try file.fill(count: bytes.count - 3) { buffer in
            let count = min(buffer.count, offset < 100_000 ? 1000 : buffer.count, bytes.count - offset)
            buffer.copyBytes(from: bytes[offset..<(offset + count)])
            offset += count
            return count
        }
        #expect(file.position == Int64(bytes.count))
        try file.close()
        let same = try scratch.read("f.bin") == bytes
        #expect(same)
    }
}
