import FerryCore
import FerryTesting
import Foundation
import Testing

@Suite struct RunFilesTests {
    /// Whether `body` throws the error of an output that would replace a file, with `message` in it.
    private func refuses(_ message: String, _ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch let error as CoreError {
            return error.code == .outputReplacesInput && error.kind == .usage && error.message.contains(message)
        } catch {
            return false
        }
    }

    @Test func refusesAnOutputThatNamesAnInputHoweverSpelled() throws {
        let scratch = try Scratch()
        let input = try scratch.write("in.ndjson", "{}\n")
        try FileManager.default.createDirectory(atPath: scratch.file("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: scratch.file("soft"), withDestinationPath: input)
        try FileManager.default.linkItem(atPath: input, toPath: scratch.file("hard"))
        let files = RunFiles()
        files.add(input, as: "the records file in.ndjson")
        for path in [input, scratch.file("sub/../in.ndjson"), scratch.file("soft"), scratch.file("hard")] {
            #expect(refuses("would replace the records file in.ndjson") { try files.claim(output: path, as: "the bundle") }, "\(path)")
        }
        try files.claim(output: scratch.file("out.tar.gz"), as: "the bundle")
        try files.check(output: scratch.file("out.tar.gz"), as: "the bundle")
    }

    @Test func givesEachOutputItsOwnPath() throws {
        let scratch = try Scratch()
        let files = RunFiles()
        try files.claim(output: scratch.file("out.tar.gz"), as: "the bundle")
        // The same output again (a writer checks early and opens late); another output at that place is refused.
        try files.claim(output: scratch.file("out.tar.gz"), as: "the bundle")
        #expect(refuses("is also the bundle") { try files.claim(output: scratch.file("./out.tar.gz"), as: "the reject file") })
        try files.claim(output: scratch.file("rejects.jsonl"), as: "the reject file")
    }

    /// Files found during a run, answered on demand.
    final class FoundFiles: InputFileSet, @unchecked Sendable {
        var found: [FileIdentity: String] = [:]
        func inputDescription(of identity: FileIdentity) -> String? { found[identity] }
    }

    @Test func asksTheSetsOfFilesFoundDuringTheRun() throws {
        let scratch = try Scratch()
        let asset = try scratch.write("photo.png", "picture")
        let files = RunFiles()
        let found = FoundFiles()
        files.add(found)
        try files.check(output: asset, as: "the bundle")
        found.found[try #require(FileIdentity(path: asset))] = "the asset photo.png"
        #expect(refuses("the bundle \(asset) would replace the asset photo.png") { try files.check(output: asset, as: "the bundle") })
    }

    @Test func missingFilesAreNoInputs() throws {
        let scratch = try Scratch()
        let files = RunFiles()
        files.add(scratch.file("absent"), as: "nothing")
        try files.claim(output: scratch.file("absent"), as: "the bundle")
    }

    @Test func atomicOutputChecksAgainBeforeItsRename() throws {
        let scratch = try Scratch()
        let asset = try scratch.write("photo.png", "picture")
        let files = RunFiles()
        let output = try AtomicOutputFile(path: asset, files: files, as: "the bundle")
        try output.file.write("bundle bytes")
        // Read during the run, after the output was opened.
        files.add(asset, as: "the asset photo.png")
        #expect(refuses("the bundle \(asset) would replace the asset photo.png") { try output.commit() })
        #expect(try String(contentsOfFile: asset, encoding: .utf8) == "picture")
        #expect(scratch.listing() == ["photo.png"])
    }
}
