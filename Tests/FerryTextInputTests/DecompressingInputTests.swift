import FerryCore
import FerryTesting
import FerryTextInput
import Foundation
import Testing

/// `LineReader(decompressing: true)`: gzip and Zstandard files read as their content, damage named.
@Suite struct DecompressingInputTests {
    private static let text = (1...2000).map { #"{"recordName":"r\#($0)","n":\#($0 * 7919 % 1000)}"# }.joined(separator: "\n") + "\n"

    private func lines(_ path: String) throws -> [String] {
        let reader = try LineReader(path: path, decompressing: true)
        var result: [String] = []
        try reader.forEachLine { line in
            if case .bytes(let bytes, _) = line { result.append(String(decoding: bytes, as: UTF8.self)) }
        }
        return result
    }

    /// `text` compressed by the tool's command line.
    private func compressed(_ tool: String, _ text: String, in scratch: Scratch) throws -> Data {
        let plain = try scratch.write("plain-\(UUID().uuidString)", text)
        let result = try ProcessResult.run("/usr/bin/\(tool)", ["-c", plain])
        #expect(result.status == 0, "\(result.errors)")
        return result.stdout
    }

    private func failure(_ path: String) -> String? {
        do {
            _ = try lines(path)
            return nil
        } catch let error as CoreError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: ["gzip", "zstd"])
    func readsACompressedFileAsItsContent(tool: String) throws {
        let scratch = try Scratch()
        let path = try scratch.write("in.\(tool)", try compressed(tool, Self.text, in: scratch))
        #expect(try lines(path) == Self.text.split(separator: "\n").map(String.init))
        let reader = try LineReader(path: path, decompressing: true)
        #expect(reader.compression == (tool == "gzip" ? "gzip" : "Zstandard"))
    }

    @Test(arguments: ["gzip", "zstd"])
    func readsConcatenatedMembersOneAfterAnother(tool: String) throws {
        let scratch = try Scratch()
        let first = try compressed(tool, "a\nb\n", in: scratch)
        let second = try compressed(tool, "c\n", in: scratch)
        let path = try scratch.write("both", first + second)
        #expect(try lines(path) == ["a", "b", "c"])
    }

    @Test(arguments: ["gzip", "zstd"])
    func namesDamageAndTruncation(tool: String) throws {
        let scratch = try Scratch()
        let whole = try compressed(tool, Self.text, in: scratch)
        let cut = try scratch.write("cut", whole.prefix(whole.count / 2))
        #expect(failure(cut)?.contains("data ends early") == true, "\(failure(cut) ?? "")")
        let trailing = try scratch.write("trailing", whole + Data("junk".utf8))
        #expect(failure(trailing)?.contains("data is damaged near compressed byte \(whole.count)") == true, "\(failure(trailing) ?? "")")
        var flipped = whole
        flipped[whole.count / 2] ^= 0xFF
        let damaged = try scratch.write("damaged", flipped)
        #expect(failure(damaged)?.contains("is damaged") == true, "\(failure(damaged) ?? "")")
    }

    @Test func leavesOtherFilesAsTheyAre() throws {
        let scratch = try Scratch()
        #expect(try lines(try scratch.write("short", "{}")) == ["{}"])
        #expect(try lines(try scratch.write("empty", "")) == [])
        #expect(try lines(try scratch.write("long", Self.text)).count == 2000)
        // Only the magic number counts: a text file that happens to start with 0x1F is read as text.
        #expect(try lines(try scratch.write("x", Data([0x1F, 0x41, 0x0A, 0x42]))) == ["\u{1F}A", "B"])
    }
}
