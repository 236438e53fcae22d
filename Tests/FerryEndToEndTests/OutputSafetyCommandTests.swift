import FerryCore
import FerryTesting
import Foundation
import Testing

/// No output of `ferry pack` or `ferry copy` replaces one of the run's inputs or another output, however its path is
/// spelled: each such run exits 64 with the two files named, and every file is left as it was.
@Suite struct OutputSafetyCommandTests {
    /// A scratch copy of the sample: records, assets and Core Data store.
    private func sample() throws -> Scratch {
        let scratch = try Scratch()
        for name in ["records.ndjson", "assets", "store"] {
            try FileManager.default.copyItem(atPath: "\(Sample.directory)/\(name)", toPath: scratch.file(name))
        }
        return scratch
    }

    /// Runs `ferry`, expects exit 64 with `message` on stderr, and that the files it names are unchanged.
    private func expectRefused(
        _ arguments: [String], in scratch: Scratch, saying message: String, keeping files: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try files.map { try scratch.read($0) }
        let result = try ferry(arguments, in: scratch.path)
        #expect(result.status == 64, "\(arguments): \(result.errors)", sourceLocation: sourceLocation)
        #expect(result.errors.contains(message), "\(result.errors)", sourceLocation: sourceLocation)
        for (name, bytes) in zip(files, before) {
            #expect(try scratch.read(name) == bytes, "\(name) changed", sourceLocation: sourceLocation)
        }
        // No scratch file of an output is left behind.
        #expect(!scratch.listing().contains { $0.hasSuffix(".partial") }, sourceLocation: sourceLocation)
    }

    @Test func packRefusesABundleOrRejectFileOverItsRecordsFile() throws {
        let scratch = try sample()
        let keep = ["records.ndjson"]
        try expectRefused(
            ["pack", "records.ndjson", "--assets", "assets", "--format", "tar.gz", "-o", "records.ndjson"], in: scratch,
            saying: "the bundle records.ndjson would replace the records file records.ndjson", keeping: keep)
        // Spelled another way, through a symbolic link, through a hard link, or fed on standard input.
        try expectRefused(
            ["pack", "records.ndjson", "--format", "zip", "-o", "../\(URL(fileURLWithPath: scratch.path).lastPathComponent)/records.ndjson"],
            in: scratch, saying: "would replace the records file records.ndjson", keeping: keep)
        try FileManager.default.createSymbolicLink(atPath: scratch.file("link.tar.gz"), withDestinationPath: "records.ndjson")
        try expectRefused(
            ["pack", "records.ndjson", "-o", "link.tar.gz"], in: scratch, saying: "would replace the records file records.ndjson", keeping: keep)
        try FileManager.default.linkItem(atPath: scratch.file("records.ndjson"), toPath: scratch.file("hard.tar.gz"))
        try expectRefused(
            ["pack", "records.ndjson", "-o", "hard.tar.gz"], in: scratch, saying: "would replace the records file records.ndjson", keeping: keep)
        // Standard input redirected from the file is that file.
        let before = try scratch.read("records.ndjson")
        let redirected = try ProcessResult.run(
            "/bin/sh", ["-c", #""$0" pack - --format zip -o records.ndjson < records.ndjson"#, TestEnvironment.ferryBinary], in: scratch.path)
        #expect(redirected.status == 64, "\(redirected.errors)")
        #expect(redirected.errors.contains("the bundle records.ndjson would replace standard input"), "\(redirected.errors)")
        #expect(try scratch.read("records.ndjson") == before)
        try expectRefused(
            ["pack", "records.ndjson", "--assets", "assets", "-o", "b.tar.gz", "--reject-file", "records.ndjson"], in: scratch,
            saying: "the reject file records.ndjson would replace the records file records.ndjson", keeping: keep)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("b.tar.gz")))
    }

    @Test func packRefusesTheSamePathForTheBundleAndTheRejectFile() throws {
        let scratch = try sample()
        for dryRun in [[], ["--dry-run"]] {
            try expectRefused(
                ["pack", "records.ndjson", "--assets", "assets", "-o", "b.tar.gz", "--reject-file", "./b.tar.gz"] + dryRun, in: scratch,
                saying: "the bundle b.tar.gz is also the reject file ./b.tar.gz; give each output its own path", keeping: ["records.ndjson"])
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("b.tar.gz")))
    }

    @Test func packRefusesToReplaceAnAssetItRead() throws {
        let scratch = try sample()
        // Found only while reading (the records name the file), so refused just before the rename.
        try expectRefused(
            ["pack", "records.ndjson", "--assets", "assets", "--format", "zip", "-o", "assets/photos/beetle.png"], in: scratch,
            saying: "the bundle assets/photos/beetle.png would replace the asset assets/photos/beetle.png",
            keeping: ["assets/photos/beetle.png", "records.ndjson"])
        // A new file among the assets is no asset: writing it is fine.
        let fresh = try ferry(["pack", "records.ndjson", "--assets", "assets", "-o", "assets/backup.tar.gz", "-q"], in: scratch.path)
        #expect(fresh.status == 0, "\(fresh.errors)")
        let again = try ferry(["pack", "records.ndjson", "--assets", "assets", "-o", "assets/backup.tar.gz", "-q"], in: scratch.path)
        #expect(again.status == 0, "\(again.errors)")
    }

    @Test func copyRefusesARejectFileOverTheSourceOrTheTarget() throws {
        let scratch = try sample()
        let store = "store/CarsTrucksBuses.sqlite"
        try expectRefused(
            ["copy", store, "b.tar.gz", "--reject-file", store], in: scratch,
            saying: "the reject file \(store) would replace the source \(store)", keeping: [store])
        try expectRefused(
            ["copy", store, "local.ferry", "--reject-file", store], in: scratch,
            saying: "the reject file \(store) would replace the source \(store)", keeping: [store])
        // Refused before anything is written: no local store was made.
        #expect(!FileManager.default.fileExists(atPath: scratch.file("local.ferry")))
        let copy = try ferry(["copy", store, "local.ferry", "-q"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        try expectRefused(
            ["copy", store, "local.ferry", "--reject-file", "local.ferry"], in: scratch,
            saying: "the reject file local.ferry would replace the target local store local.ferry", keeping: ["local.ferry", store])
        try expectRefused(
            ["copy", "local.ferry", "out.tar.gz", "--reject-file", "local.ferry"], in: scratch,
            saying: "the reject file local.ferry would replace the source local.ferry", keeping: ["local.ferry"])
    }

    @Test func copyRefusesALocalStoreIntoItselfThroughALink() throws {
        let scratch = try sample()
        let copy = try ferry(["copy", "store/CarsTrucksBuses.sqlite", "local.ferry", "-q"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        try FileManager.default.createSymbolicLink(atPath: scratch.file("alias.ferry"), withDestinationPath: "local.ferry")
        try expectRefused(
            ["copy", "local.ferry", "alias.ferry"], in: scratch, saying: "local.ferry is both the source and the target", keeping: ["local.ferry"])
    }

    @Test func refusesAPathWhereNoFileCanGoBeforeReadingAnything() throws {
        let scratch = try sample()
        for name in ["dir.tar.gz", "dir.ferry"] {
            try FileManager.default.createDirectory(atPath: scratch.file(name), withIntermediateDirectories: true)
        }
        let runs: [([String], String)] = [
            (["pack", "records.ndjson", "--assets", "assets", "-o", "dir.tar.gz"], "dir.tar.gz is a directory; give the bundle the path of a file"),
            (["copy", "store/CarsTrucksBuses.sqlite", "dir.ferry"], "dir.ferry is a directory; give the target local store the path of a file"),
            (
                ["copy", "store/CarsTrucksBuses.sqlite", "out.tar.gz", "--reject-file", "dir.tar.gz"],
                "dir.tar.gz is a directory; give the reject file the path of a file"
            ),
            (
                ["pack", "records.ndjson", "--assets", "assets", "-o", "missing/b.tar.gz"],
                "missing is not a directory; create it, or give the bundle another path"
            ),
        ]
        for (arguments, message) in runs {
            let result = try ferry(arguments, in: scratch.path)
            #expect(result.status == 73, "\(arguments): \(result.errors)")
            #expect(result.errors.contains(message), "\(result.errors)")
            #expect(!result.errors.contains("warning"), "refused before reading: \(result.errors)")
        }
        // Refused before the run: the copy wrote no bundle either.
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.gz")))
    }
}
