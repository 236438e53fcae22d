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
        // around the page cache, so each read goes to the disk.
        let runs = RunWalker(path: steps.path)
        let ahead = ReadAhead(path: logPath, ranges: { try runs.next() })
        defer { ahead.cancel() }
        var chunk = UnsafeRawBufferPointer(start: nil, count: 0)
        /// Takes up to `count` bytes of the current run from the chunks read ahead (the runs' bytes one after another).
        func take(upTo count: Int) throws -> UnsafeRawBufferPointer {
            if chunk.isEmpty {
                guard let next = try ahead.next() else { throw Self.damaged }
                chunk = next
            }
            let taken = UnsafeRawBufferPointer(rebasing: chunk[..<min(count, chunk.count)])
            chunk = UnsafeRawBufferPointer(rebasing: chunk[taken.count...])
            return taken
        }
        let reader = try ByteRecordFile.Reader(path: steps.path)
        var pending: (path: String, size: Int64)?
        func readHeader(_ bytes: UnsafeRawBufferPointer) throws -> (String, Int64) {
            var record = ByteRecordReader(bytes)
            guard try record.uint8() == Self.fileTag else { throw Self.damaged }
            return (try record.text(), try record.int64())
        }
        if let first = try reader.next() { pending = try readHeader(first) }
        while let (path, size) = pending {
            pending = nil
            // The runs follow their file; the next file's entry ends them.
            var remaining: Int64 = 0
            try body(path, size) { buffer in
                while true {
                    if remaining > 0 {
                        let bytes = try take(upTo: Int(min(Int64(buffer.count), remaining)))
                        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes.count]).copyMemory(from: bytes)
                        remaining -= Int64(bytes.count)
                        return bytes.count
                    }
                    guard pending == nil, let bytes = try reader.next() else { return 0 }
                    var record = ByteRecordReader(bytes)
                    if try record.uint8() == Self.runTag {
                        _ = try record.int64()
                        remaining = try record.int64()
                    } else {
                        pending = try readHeader(bytes)
                    }
                }
            }
            // A body that stopped early leaves the rest of the file's runs unread: their bytes are passed over.
            while remaining > 0 { remaining -= Int64(try take(upTo: Int(min(remaining, 1 << 30))).count) }
            while pending == nil, let bytes = try reader.next() {
                var record = ByteRecordReader(bytes)
                if try record.uint8() == Self.fileTag {
                    pending = try readHeader(bytes)
                } else {
                    _ = try record.int64()
                    remaining = try record.int64()
                    while remaining > 0 { remaining -= Int64(try take(upTo: Int(min(remaining, 1 << 30))).count) }
                }
            }
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
