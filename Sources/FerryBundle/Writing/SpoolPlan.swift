import FerryCore
import FerryRecords
import FerrySorting

/// The record and deletion files of a bundle about to be written, as ``RecordSpool/plan(ranks:dropping:temporaryDirectory:fileListMemoryLimit:rejected:)``
/// worked them out: in bundle order, each with its size, lines and SHA-256 and the runs of the spool's log that hold
/// its lines (``SpoolRun``: as they are, or one Zstandard frame each), all in scratch files.
final class SpoolPlan {
    /// The files, for `manifest.json`.
    let files: RecordFileList
    /// Their total size.
    let bytes: Int64
    /// The zones that have a file.
    let zones: ZoneList
    private let steps: ByteRecordFile
    private let paths: ExternalByteSorter
    private let logPath: String
    /// Holds the scratch files until the plan goes away.
    private let directory: TemporaryDirectory

    private static let fileTag: UInt8 = 0
    private static let runTag: UInt8 = 1

    private init(builder: Builder, logPath: String) throws {
        files = try builder.files.finish()
        bytes = builder.bytes
        try builder.steps.finish()
        steps = builder.steps
        zones = builder.zones
        paths = builder.paths
        directory = builder.directory
        self.logPath = logPath
    }

    /// Calls `body` with every file's path and SHA-256, in path order (bytewise, as BagIt manifests are written).
    func forEachPath(_ body: (String, SHA256Digest) throws -> Void) throws {
        try paths.forEachSorted { bytes in
            var reader = ByteRecordReader(bytes)
            let path = try reader.key()
            guard let digest = SHA256Digest(bytes: try reader.raw(32)) else { throw Self.damaged }
            try body(path, digest)
        }
    }

    /// Calls `body` with every file in bundle order: its path, its size, and its runs, to be read in order.
    func forEachFile(_ body: (String, Int64, FileRuns) throws -> Void) throws {
        // The runs' stored bytes are read ahead, in the order the steps name them, on a thread of its own, beside the
        // thread that writes the archive. A file's runs follow its entry, so here the files take their runs' worth of
        // that stream, one after another.
        let walker = RunWalker(path: steps.path)
        let ahead = ReadAhead(path: logPath, ranges: { try walker.next() })
        defer { ahead.cancel() }
        let reader = try ByteRecordFile.Reader(path: steps.path)
        var next = try reader.next().map { Array($0) }
        while let entry = next {
            let (path, size) = try entry.withUnsafeBytes { bytes in
                var record = ByteRecordReader(bytes)
                guard try record.uint8() == Self.fileTag else { throw Self.damaged }
                return (try record.text(), try record.int64())
            }
            let runs = FileRuns(steps: reader, ahead: ahead)
            try body(path, size, runs)
            // A body that stopped early leaves the rest of the file unread.
            next = try runs.skipRest()
        }
        // The runs hold no more bytes than the steps name.
        var extra: UInt8 = 0
        guard try withUnsafeMutableBytes(of: &extra, { try ahead.read(into: $0) }) == 0 else { throw Self.damaged }
    }

    /// One record file's runs, as ``forEachFile(_:)`` hands them over: each run's stored bytes in turn, as the log
    /// holds them (a Zstandard frame for a compressed run).
    final class FileRuns {
        private let steps: ByteRecordFile.Reader
        private let ahead: ReadAhead
        /// The stored bytes of the current run not read yet.
        private var left: Int64 = 0
        /// The entry of the next file, once this file's runs are all taken; `nil` also at the end of the plan.
        private var following: [UInt8]?
        private var ended = false

        fileprivate init(steps: ByteRecordFile.Reader, ahead: ReadAhead) {
            self.steps = steps
            self.ahead = ahead
        }

        /// The file's next run, or `nil` after its last; what is left of the run before is skipped.
        func next() throws -> SpoolRun? {
            guard !ended else { return nil }
            try ahead.skip(left)
            left = 0
            guard let bytes = try steps.next() else {
                ended = true
                return nil
            }
            var record = ByteRecordReader(bytes)
            guard try record.uint8() == SpoolPlan.runTag else {
                following = Array(bytes)
                ended = true
                return nil
            }
            let run = try SpoolRun(reading: &record)
            left = run.stored
            return run
        }

        /// Reads the current run's next stored bytes into `buffer`; 0 at its end.
        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard left > 0, !buffer.isEmpty else { return 0 }
            let count = try ahead.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(Int64(buffer.count), left))]))
            guard count > 0 else { throw SpoolPlan.damaged }
            left -= Int64(count)
            return count
        }

        /// The current run's stored bytes that are left, whole: for a compressed run (at most
        /// ``SpoolRun/largestCompressed`` bytes).
        func storedBytes() throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: Int(left))
            try bytes.withUnsafeMutableBytes { buffer in
                var filled = 0
                while filled < buffer.count {
                    filled += try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                }
            }
            return bytes
        }

        /// Skips the runs not taken; returns the next file's entry.
        fileprivate func skipRest() throws -> [UInt8]? {
            while try next() != nil {}
            return following
        }
    }

    /// The runs of the log in the steps' order, for reading them ahead: used on the read-ahead thread only.
    private final class RunWalker: @unchecked Sendable {
        private let path: String
        private var reader: ByteRecordFile.Reader?

        init(path: String) { self.path = path }

        func next() throws -> (offset: Int64, length: Int64)? {
            if reader == nil { reader = try ByteRecordFile.Reader(path: path) }
            while let bytes = try reader?.next() {
                var record = ByteRecordReader(bytes)
                if try record.uint8() == SpoolPlan.runTag {
                    let run = try SpoolRun(reading: &record)
                    return (run.offset, run.stored)
                }
            }
            return nil
        }
    }

    /// Calls `body` with every line of every file, in bundle order (without its newline).
    func forEachLine(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let log = try InputFile(path: logPath)
        try steps.forEach { bytes in
            var record = ByteRecordReader(bytes)
            guard try record.uint8() == Self.runTag else { return }
            try RecordSpool.forEachLine(in: log, run: try SpoolRun(reading: &record)) { _, line in try body(line) }
        }
    }

    private static let damaged = BundleError(.readFailed, "a scratch file of the bundle's plan is damaged")

    /// Gathers the plan file by file, each followed by its runs.
    final class Builder {
        fileprivate var files: RecordFileList.Builder
        fileprivate var bytes: Int64 = 0
        fileprivate let steps: ByteRecordFile
        fileprivate let zones: ZoneList
        fileprivate let paths: ExternalByteSorter
        fileprivate let directory: TemporaryDirectory
        private var record = ByteRecordWriter()

        init(temporaryDirectory: String?, fileListMemoryLimit: Int) throws {
            directory = try TemporaryDirectory(prefix: "ferry-plan", parent: temporaryDirectory)
            steps = try ByteRecordFile(path: directory.file("steps"))
            files = RecordFileList.Builder(temporaryDirectory: temporaryDirectory, memoryLimit: fileListMemoryLimit)
            zones = ZoneList(temporaryDirectory: temporaryDirectory)
            paths = ExternalByteSorter(memoryLimit: 2 << 20, prefix: "ferry-plan-paths", temporaryDirectory: temporaryDirectory)
        }

        /// Starts the next file.
        func file(_ key: RecordSpool.Key, count: Int, bytes size: Int64, digest: SHA256Digest) throws {
            let path =
                key.kind == .records
                ? BundleLayout.recordsPath(type: key.recordType ?? "", zone: key.zoneID) : BundleLayout.deletionsPath(zone: key.zoneID)
            try files.append(
                BundleManifest.RecordFile(path: path, kind: key.kind, recordType: key.recordType, zoneID: key.zoneID, count: count, bytes: size))
            bytes += size
            record.removeAll()
            record.uint8(SpoolPlan.fileTag)
            record.text(path)
            record.int64(size)
            try steps.append(record.bytes)
            try zones.append(key.zoneID)
            record.removeAll()
            record.key(path)
            digest.withUnsafeBytes { record.raw($0) }
            try paths.append(record.bytes)
        }

        /// Adds a run of the log to the file last started.
        func run(_ run: SpoolRun) throws {
            record.removeAll()
            record.uint8(SpoolPlan.runTag)
            run.encode(into: &record)
            try steps.append(record.bytes)
        }

        func finish(logPath: String) throws -> SpoolPlan {
            try SpoolPlan(builder: self, logPath: logPath)
        }
    }
}
