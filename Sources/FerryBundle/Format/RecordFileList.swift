import FerryCore
import FerryRecords
import FerrySorting

/// The record and deletion files of a bundle, in bundle order: in memory while few, in a scratch file beyond.
///
/// A bundle has one file per record type and zone, and an app with a zone per user or per share may have hundreds of
/// thousands; kept as values they cost about a kilobyte each. Past ``Builder/memoryLimit`` files the list goes to a
/// scratch file and is read back each time it is walked. Immutable once built, so it may be shared between threads.
public final class RecordFileList: @unchecked Sendable {
    /// The number of files.
    public let count: Int
    /// The lines of the record files.
    public let recordCount: Int
    /// The lines of the deletion files.
    public let deletionCount: Int
    private let storage: Storage

    private enum Storage {
        case memory([BundleManifest.RecordFile])
        case file(ByteRecordFile, directory: TemporaryDirectory)
    }

    /// A list of files held in memory.
    public convenience init(_ files: [BundleManifest.RecordFile]) {
        var builder = Builder(temporaryDirectory: nil, memoryLimit: .max)
        // An in-memory builder cannot fail: nothing is written.
        for file in files { try? builder.append(file) }
        self.init(builder)
    }

    private init(_ builder: Builder) {
        count = builder.count
        recordCount = builder.recordCount
        deletionCount = builder.deletionCount
        if let (file, directory) = builder.spill {
            storage = .file(file, directory: directory)
        } else {
            storage = .memory(builder.files)
        }
    }

    /// Calls `body` with each file, in bundle order.
    /// - Throws: ``CoreError`` when the scratch file cannot be read, or what `body` throws.
    public func forEach(_ body: (BundleManifest.RecordFile) throws -> Void) throws {
        switch storage {
        case .memory(let files):
            for file in files { try body(file) }
        case .file(let file, _):
            try file.forEach { bytes in try body(try BundleManifest.RecordFile(scratch: bytes)) }
        }
    }

    /// Every file, as an array (for lists known to be short, and tests).
    public func all() throws -> [BundleManifest.RecordFile] {
        var files: [BundleManifest.RecordFile] = []
        try forEach { files.append($0) }
        return files
    }

    /// Gathers files one by one, moving them to a scratch file past a limit.
    public struct Builder {
        /// Files kept in memory before they all go to a scratch file.
        public let memoryLimit: Int
        private let temporaryDirectory: String?
        fileprivate var files: [BundleManifest.RecordFile] = []
        fileprivate var spill: (ByteRecordFile, TemporaryDirectory)?
        fileprivate var count = 0
        fileprivate var recordCount = 0
        fileprivate var deletionCount = 0
        private var record = ByteRecordWriter()

        /// A builder keeping at most `memoryLimit` files in memory, the rest in a scratch directory under
        /// `temporaryDirectory` (default `$TMPDIR`).
        public init(temporaryDirectory: String?, memoryLimit: Int = 4096) {
            self.temporaryDirectory = temporaryDirectory
            self.memoryLimit = memoryLimit
        }

        /// Adds the next file.
        /// - Throws: ``CoreError`` when the scratch file cannot be written.
        public mutating func append(_ file: BundleManifest.RecordFile) throws {
            count += 1
            switch file.kind {
            case .records: recordCount += file.count
            case .deletions: deletionCount += file.count
            }
            if spill == nil, files.count == memoryLimit {
                let directory = try TemporaryDirectory(prefix: "ferry-record-files", parent: temporaryDirectory)
                let output = try ByteRecordFile(path: directory.file("files"))
                for earlier in files { try write(earlier, to: output) }
                files = []
                spill = (output, directory)
            }
            if let (output, _) = spill {
                try write(file, to: output)
            } else {
                files.append(file)
            }
        }

        private mutating func write(_ file: BundleManifest.RecordFile, to output: ByteRecordFile) throws {
            record.removeAll()
            file.encode(into: &record)
            try output.append(record.bytes)
        }

        /// The list.
        /// - Throws: ``CoreError`` when the scratch file cannot be flushed.
        public func finish() throws -> RecordFileList {
            try spill?.0.finish()
            return RecordFileList(self)
        }
    }
}

extension RecordFileList: Hashable {
    /// Lists are equal when they hold the same files in the same order (a list that cannot be read equals none).
    public static func == (lhs: RecordFileList, rhs: RecordFileList) -> Bool {
        guard lhs.count == rhs.count, lhs.recordCount == rhs.recordCount, lhs.deletionCount == rhs.deletionCount else { return false }
        guard let left = try? lhs.all(), let right = try? rhs.all() else { return false }
        return left == right
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(recordCount)
        hasher.combine(deletionCount)
    }
}

extension BundleManifest.RecordFile {
    /// Writes the file for a scratch list.
    func encode(into record: inout ByteRecordWriter) {
        record.uint8(kind == .records ? 0 : 1)
        record.text(path)
        record.text(recordType ?? "")
        record.text(zoneID.zoneName)
        record.text(zoneID.ownerName)
        record.int64(Int64(count))
        record.int64(bytes)
    }

    /// Reads a file ``encode(into:)`` wrote.
    init(scratch bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteRecordReader(bytes)
        let kind: Kind = try reader.uint8() == 0 ? .records : .deletions
        let path = try reader.text()
        let type = try reader.text()
        let zone = ZoneID(zoneName: try reader.text(), ownerName: try reader.text())
        self.init(
            path: path, kind: kind, recordType: kind == .records ? type : nil, zoneID: zone, count: Int(try reader.int64()),
            bytes: try reader.int64())
    }
}
