import FerryTesting
import Foundation
import Testing

@Suite struct BundleCommandTests {
    private func packedSample(_ scratch: Scratch, name: String = "cars.tar.gz") throws {
        let result = try ferry(
            ["pack", Sample.records, "--assets", Sample.assets, "-o", name, "-q", "--created-at", "2026-01-02T03:04:05Z"],
            in: scratch.path)
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test func listsABundle() throws {
        let scratch = try Scratch()
        try packedSample(scratch)
        let result = try ferry(["ls", "cars.tar.gz"], in: scratch.path)
        #expect(result.status == 0)
        try expectSnapshot(result.output.replacingOccurrences(of: "ferry \(version())", with: "ferry VERSION"), named: "ls-cars.txt")
        let json = try ferry(["ls", "cars.tar.gz", "--json"], in: scratch.path)
        try expectSnapshot(json.output.replacingOccurrences(of: "ferry \(version())", with: "ferry VERSION"), named: "ls-cars.jsonl")
    }

    @Test func verifiesAndUnpacks() throws {
        let scratch = try Scratch()
        try packedSample(scratch)
        let verify = try ferry(["verify", "cars.tar.gz"], in: scratch.path)
        #expect(verify.status == 0)
        #expect(verify.output == "cars.tar.gz: OK (13 records, 1 deletion, 2 assets, 9.0 kB)\n")
        let unpack = try ferry(["unpack", "cars.tar.gz", "restored"], in: scratch.path)
        #expect(unpack.status == 0, "\(unpack.errors)")
        #expect(try ferry(["verify", "restored"], in: scratch.path).status == 0)
        let again = try ferry(["unpack", "cars.tar.gz", "restored"], in: scratch.path)
        #expect(again.status == 73)
        #expect(again.errors.contains("already exists"))
    }

    @Test func acceptsABundleRepackedWithPlainTar() throws {
        // A user unpacks a bundle, looks inside, and packs it again with `tar -C DIR .`: entries start with "./".
        let scratch = try Scratch()
        try packedSample(scratch)
        try FileManager.default.createDirectory(atPath: scratch.file("tree"), withIntermediateDirectories: false)
        #expect(try ferry(["unpack", "cars.tar.gz", "tree/bag"], in: scratch.path).status == 0)
        for (name, directory) in [("parent.tar.gz", "tree"), ("flat.tar.gz", "tree/bag")] {
            let tar = try ProcessResult.run("/usr/bin/tar", ["-czf", scratch.file(name), "-C", scratch.file(directory), "."])
            #expect(tar.status == 0, "\(tar.errors)")
            let verify = try ferry(["verify", name], in: scratch.path)
            #expect(verify.status == 0, "\(name): \(verify.errors)")
            let cat = try ferry(["cat", name], in: scratch.path)
            let original = try ferry(["cat", "cars.tar.gz"], in: scratch.path)
            // tar stores the files in directory order, so the records come in another file order.
            #expect(cat.output.split(separator: "\n").sorted() == original.output.split(separator: "\n").sorted())
        }
    }

    @Test func exitsSixtyFiveOnADamagedBundleAndSaysWhy() throws {
        let scratch = try Scratch()
        try packedSample(scratch)
        #expect(try ferry(["unpack", "cars.tar.gz", "bag"], in: scratch.path).status == 0)
        var bytes = try scratch.read("bag/data/records/CarZone/Car.ndjson")
        bytes[10] ^= 0x20
        try scratch.write("bag/data/records/CarZone/Car.ndjson", bytes)
        let verify = try ferry(["verify", "bag", "--json"], in: scratch.path)
        #expect(verify.status == 65)
        #expect(verify.output.contains(#""error":"bundle.checksum-mismatch""#))
        #expect(verify.output.contains(#""valid":false"#))
        let cat = try ferry(["cat", "bag"], in: scratch.path)
        #expect(cat.status == 65)
    }

    @Test func refusesAPathTraversalArchiveWithSixtyFive() throws {
        let scratch = try Scratch()
        try TarBuilder().add("bag/bagit.txt", .file(Data("BagIt-Version: 1.0\n".utf8))).add("../escape.txt", .file(Data("x".utf8)))
            .write(to: scratch.file("evil.tar.gz"))
        let result = try ferry(["unpack", "evil.tar.gz", "out", "--json"], in: scratch.path)
        #expect(result.status == 65)
        #expect(result.errors.contains(#""message_type":"exit_error""#))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
        #expect(
            !FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: scratch.path).deletingLastPathComponent().appendingPathComponent("escape.txt").path))
    }

    @Test(
        arguments: [
            (["pack"], 64),
            (["pack", "x.ndjson"], 64),
            (["pack", "x.ndjson", "-o", "out.rar"], 64),
            (["pack", "missing.ndjson", "-o", "out.tar.gz"], 66),
            (["pack", "in.ndjson", "-o", "/nonexistent-dir/out.tar.gz"], 73),
            (["pack", "in.ndjson", "-o", "out.tar.gz", "--created-at", "99999999999999"], 64),
            (["pack", "in.ndjson", "-o", "out.tar.gz", "--created-at", "1969-12-31T23:59:59Z"], 64),
            (["verify", "missing.tar.gz"], 66),
            (["ls", "in.ndjson"], 65),
            (["frobnicate"], 64),
            (["verify", "--quiet", "--verbose", "x"], 64),
        ] as [([String], Int32)])
    func exitsWithTheDocumentedCodes(arguments: [String], status: Int32) throws {
        let scratch = try Scratch()
        try scratch.write("in.ndjson", #"{"recordName":"a","recordType":"T","fields":{}}"#)
        let result = try ferry(arguments, in: scratch.path)
        #expect(result.status == status, "\(arguments): \(result.errors)")
        #expect(!result.errors.isEmpty)
    }

    @Test func interruptionLeavesNoPartialFiles() throws {
        // Packing from a FIFO blocks on input, so SIGINT arrives at a known point.
        let scratch = try Scratch()
        let fifo = scratch.file("in.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: scratch.file("tmp"), withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.ferryBinary)
        process.arguments = ["pack", fifo, "-o", scratch.file("out.tar.gz"), "--temp-dir", scratch.file("tmp")]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let writer = FileHandle(forWritingAtPath: fifo)
        writer?.write(Data(#"{"recordName":"a","recordType":"T","fields":{}}"#.utf8 + [0x0A]))
        Thread.sleep(forTimeInterval: 0.5)
        #expect(!(FileManager.default.enumerator(atPath: scratch.file("tmp"))?.allObjects.isEmpty ?? true))
        process.interrupt()
        process.waitUntilExit()
        try? writer?.close()
        #expect(process.terminationStatus == 130)
        #expect(FileManager.default.enumerator(atPath: scratch.file("tmp"))?.allObjects.isEmpty ?? true)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.gz")))
    }

    @Test func helpIsStable() throws {
        let scratch = try Scratch()
        let help = try ferry(["--help"], in: scratch.path)
        #expect(help.status == 0)
        try expectSnapshot(help.output, named: "help.txt")
        let pack = try ferry(["pack", "--help"], in: scratch.path)
        try expectSnapshot(pack.output, named: "help-pack.txt")
    }

    private func version() throws -> String {
        try ferry(["--version"], in: "/").output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
