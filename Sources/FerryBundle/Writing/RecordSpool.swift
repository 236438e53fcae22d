import FerryCore
import FerryRecords

/// Scratch NDJSON files, one per (record type, zone) and one per zone for deletions, filled while records arrive in
/// any order and copied into the bundle in dependency order at the end.
///
/// Each file is hashed as it is written, so the bundle's checksum manifest is known before the archive starts.
/// At most ``maxOpenFiles`` descriptors are open at once, whatever the number of zones.
final class RecordSpool {
    /// Which file a line belongs to.
    struct Key: Hashable, Sendable {
        var kind: BundleManifest.RecordFile.Kind
        var recordType: String?
        var zoneID: ZoneID
    }

    /// One finished spool file.
    struct Segment: Sendable {
        var key: Key
        var path: String
        var digest: SHA256Digest
        var bytes: Int64
        var count: Int
    }

    private final class File {
        let path: String
        var hasher = SHA256Hasher()
        var bytes: Int64 = 0
        var count = 0
        var handle: OutputFile?
        var lastUse = 0
        var created = false
        init(path: String) { self.path = path }
    }

    static let maxOpenFiles = 64

    private let directory: TemporaryDirectory?
    private var files: [Key: File] = [:]
    private var openCount = 0
    private var clock = 0
    /// The file of the last append: records mostly arrive grouped, so most appends skip the hash lookup.
    private var last: (key: Key, file: File)?
    private static let newline: [UInt8] = [UInt8(ascii: "\n")]

    /// Creates an empty spool in a new scratch directory under `parent` (default `$TMPDIR`).
    /// - Parameter countOnly: only count lines and bytes, write nothing (for dry runs).
    init(parent: String?, countOnly: Bool = false) throws {
        directory = countOnly ? nil : try TemporaryDirectory(prefix: "ferry-spool", parent: parent)
    }

    /// Appends one line (without its newline) to a key's file.
    func append(_ line: UnsafeRawBufferPointer, to key: Key) throws {
        let file: File
        if let last, last.key == key {
            file = last.file
        } else if let existing = files[key] {
            file = existing
        } else {
            file = File(path: directory?.file("\(files.count).ndjson") ?? "")
            files[key] = file
        }
        last = (key, file)
        file.bytes += Int64(line.count + 1)
        file.count += 1
        guard directory != nil else { return }
        clock += 1
        file.lastUse = clock
        let handle = try handle(for: file)
        try handle.write(line)
        try Self.newline.withUnsafeBytes { newline in
            try handle.write(newline)
            file.hasher.update(line)
            file.hasher.update(newline)
        }
    }

    /// Closes every file and returns them.
    func finish() throws -> [Key: Segment] {
        var result: [Key: Segment] = [:]
        for (key, file) in files {
            try file.handle?.close()
            file.handle = nil
            result[key] = Segment(key: key, path: file.path, digest: file.hasher.finalize(), bytes: file.bytes, count: file.count)
        }
        openCount = 0
        return result
    }

    private func handle(for file: File) throws -> OutputFile {
        if let handle = file.handle { return handle }
        if openCount >= Self.maxOpenFiles, let victim = files.values.filter({ $0.handle != nil }).min(by: { $0.lastUse < $1.lastUse }) {
            try victim.handle?.close()
            victim.handle = nil
            openCount -= 1
        }
        let handle = try OutputFile(path: file.path, exclusive: !file.created, append: file.created, bufferSize: 1 << 16)
        file.created = true
        file.handle = handle
        openCount += 1
        return handle
    }
}
