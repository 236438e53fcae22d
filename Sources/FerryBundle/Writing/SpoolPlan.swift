import FerryCore
import FerryRecords

/// The record and deletion files of a bundle about to be written, as ``RecordSpool/plan(ranks:dropping:temporaryDirectory:fileListMemoryLimit:rejected:)``
/// worked them out: in bundle order, each with its size, lines and SHA-256 and the stretches of the spool's log that
/// hold its lines, all in scratch files.
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

    /// Calls `body` with every file in bundle order: its path, its size, and a function that fills a buffer with its
    /// next bytes (0 at its end).
    func forEachFile(_ body: (String, Int64, (UnsafeMutableRawBufferPointer) throws -> Int) throws -> Void) throws {
        // The runs' bytes are read ahead, in the order the steps name them, on a thread of its own: the log was written
        // around the page cache, so each read goes to the disk. A file's runs follow its entry and add up to its size,
        // so here the files take their sizes' worth of that stream, one after another.
        let runs = RunWalker(path: steps.path)
        let ahead = ReadAhead(path: logPath, ranges: { try runs.next() })
        defer { ahead.cancel() }
        let reader = try ByteRecordFile.Reader(path: steps.path)
        while let bytes = try reader.next() {
            var record = ByteRecordReader(bytes)
            guard try record.uint8() == Self.fileTag else { continue }
            let (path, size) = (try record.text(), try record.int64())
            var remaining = size
            try body(path, size) { buffer in
                guard remaining > 0 else { return 0 }
                let count = try ahead.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(Int64(buffer.count), remaining))]))
                guard count > 0 else { throw Self.damaged }
                remaining -= Int64(count)
                return count
            }
            // A body that stopped early leaves the rest of the file unread.
            try ahead.skip(remaining)
        }
        // The runs hold no more bytes than the files' sizes.
        var extra: UInt8 = 0
        guard try withUnsafeMutableBytes(of: &extra, { try ahead.read(into: $0) }) == 0 else { throw Self.damaged }
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
                if try record.uint8() == SpoolPlan.runTag { return (try record.int64(), try record.int64()) }
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
            try RecordSpool.forEachLine(in: log, offset: try record.int64(), length: try record.int64()) { _, line in try body(line) }
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

        /// Adds a stretch of the log to the file last started.
        func run(offset: Int64, length: Int64) throws {
            record.removeAll()
            record.uint8(SpoolPlan.runTag)
            record.int64(offset)
            record.int64(length)
            try steps.append(record.bytes)
        }

        func finish(logPath: String) throws -> SpoolPlan {
            try SpoolPlan(builder: self, logPath: logPath)
        }
    }
}
