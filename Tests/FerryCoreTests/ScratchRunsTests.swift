import FerryCore
import FerryTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Scratch directories carry their run's ID; those of runs that ended without removing them (`kill -9`) are removed
/// by the next run that makes scratch files in the same place, and those of live runs are left alone.
@Suite struct ScratchRunsTests {
    /// A run ID in the form `ScratchRuns` writes.
    private func runID(_ pid: Int32) -> String { "r\(pid)-0badf00d" }

    @Test func removesTheScratchOfEndedRunsAndKeepsTheLiveOnes() throws {
        let scratch = try Scratch()
        let parent = scratch.file("tmp")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        // An ended run with its lock file left (unlocked), another whose lock file is gone too.
        let ended = runID(999_991)
        try scratch.write("tmp/ferry-run.\(ended).lock", "999991\n")
        try scratch.write("tmp/ferry-assets.\(ended).aB12cD/blobs/1", Data(repeating: 7, count: 5000))
        try scratch.write("tmp/ferry-spool.\(ended).Zz99yY/log", Data(repeating: 1, count: 100))
        let vanished = runID(999_992)
        try scratch.write("tmp/ferry-ledger.\(vanished).Qq11Ww/runs", Data(repeating: 2, count: 100))
        // A live run: its lock file is locked (by another open file, which flock treats as another holder).
        let live = runID(999_993)
        let lockPath = scratch.file("tmp/ferry-run.\(live).lock")
        try scratch.write("tmp/ferry-run.\(live).lock", "999993\n")
        let descriptor = open(lockPath, O_RDWR)
        #expect(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        defer { close(descriptor) }
        try scratch.write("tmp/ferry-spool.\(live).Pp00Oo/log", Data(repeating: 3, count: 100))
        // Names Ferry did not make this way: an older version's scratch, and other programs' files.
        try scratch.write("tmp/ferry-spool.AbCdEf/log", "old")
        try scratch.write("tmp/notes.txt", "mine")

        let before = TemporaryDirectory.staleRemoved
        let made = try TemporaryDirectory(prefix: "ferry-assets", parent: parent)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: parent))
        #expect(!left.contains { $0.contains(ended) || $0.contains(vanished) }, "\(left)")
        #expect(left.contains("ferry-run.\(live).lock") && left.contains("ferry-spool.\(live).Pp00Oo"))
        #expect(left.contains("ferry-spool.AbCdEf") && left.contains("notes.txt"))
        // This run's own directory and lock file, named with its ID.
        let name = URL(fileURLWithPath: made.path).lastPathComponent
        #expect(name.hasPrefix("ferry-assets.r\(getpid())-"), "\(name)")
        #expect(left.contains { $0.hasPrefix("ferry-run.r\(getpid())-") && $0.hasSuffix(".lock") })
        let after = TemporaryDirectory.staleRemoved
        #expect(after.directories - before.directories == 3 && after.bytes - before.bytes == 5200)
        // A second directory in the same place does not sweep again, and never its own run's.
        let second = try TemporaryDirectory(prefix: "ferry-spool", parent: parent)
        #expect(FileManager.default.fileExists(atPath: made.path) && FileManager.default.fileExists(atPath: second.path))
    }
}
