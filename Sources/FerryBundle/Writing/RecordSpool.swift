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
        /// The file's number, as ``append(_:to:)`` gave it in its lines' places.
        var index: Int
        var path: String
        var digest: SHA256Digest
        var bytes: Int64
        var count: Int
    }

    private final class File {
        let index: Int
        let path: String
        var hasher = SHA256Hasher()
        var bytes: Int64 = 0
        var count = 0
        var handle: OutputFile?
        var lastUse = 0
        var created = false
        init(index: Int, path: String) {
            self.index = index
            self.path = path
        }
    }

    static let maxOpenFiles = 64

    private let directory: TemporaryDirectory
    private var files: [Key: File] = [:]
    /// The files with an open handle (at most ``maxOpenFiles``): the one to close is found among these, not among
    /// every file (a bundle of many zones has tens of thousands).
    private var openFiles: [File] = []
    private var clock = 0
    /// The file of the last append and its key: records mostly arrive grouped, so most appends skip the hash lookup
    /// (and, kept apart, copy no key).
    private var lastKey: Key?
    private var lastFile: File?
    private static let newline: [UInt8] = [UInt8(ascii: "\n")]

    /// Creates an empty spool in a new scratch directory under `parent` (default `$TMPDIR`).
    init(parent: String?) throws {
        directory = try TemporaryDirectory(prefix: "ferry-spool", parent: parent)
    }

    /// Appends one line (without its newline) to a key's file.
    /// - Returns: where the line went: its file's number and its 0-based line number there.
    func append(_ line: UnsafeRawBufferPointer, to key: Key) throws -> FileLine {
        let file: File
        if let lastFile, lastKey == key {
            file = lastFile
        } else {
            file = try self.file(for: key)
            lastKey = key
            lastFile = file
        }
        let location = FileLine(file: file.index, line: file.count)
        file.bytes += Int64(line.count + 1)
        file.count += 1
        clock += 1
        file.lastUse = clock
        let handle = try handle(for: file)
        try handle.write(line)
        try Self.newline.withUnsafeBytes { newline in
            try handle.write(newline)
            file.hasher.update(line)
            file.hasher.update(newline)
        }
        return location
    }

    /// A key's file, made the first time the key is seen.
    private func file(for key: Key) throws -> File {
        if let existing = files[key] { return existing }
        guard files.count <= FileLine.maxFile else {
            throw BundleError(.writeFailed, "more than \(FileLine.maxFile + 1) record files (record types times zones)")
        }
        let file = File(index: files.count, path: directory.file("\(files.count).ndjson"))
        files[key] = file
        return file
    }

    /// Closes every file and returns them.
    func finish() throws -> [Key: Segment] {
        var result: [Key: Segment] = [:]
        result.reserveCapacity(files.count)
        for (key, file) in files {
            try file.handle?.close()
            file.handle = nil
            result[key] = Segment(
                key: key, index: file.index, path: file.path, digest: file.hasher.finalize(), bytes: file.bytes, count: file.count)
        }
        // The segments are all that is left of the files (one per record type and zone, and there may be many).
        openFiles = []
        files = [:]
        lastKey = nil
        lastFile = nil
        return result
    }

    /// Removes the scratch files (after ``finish()``, once they have been copied).
    func remove() {
        lastKey = nil
        lastFile = nil
        files = [:]
        directory.remove()
    }

    /// Removes the scratch files on another thread while `body` runs (after ``finish()``, once they have been copied).
    ///
    /// ``remove()`` still forgets the files.
    func remove<Result>(whileRunning body: () throws -> Result) rethrows -> Result {
        try directory.remove(whileRunning: body)
    }

    /// Calls `body` with each line of a finished segment (without its newline) and its 0-based number.
    static func forEachLine(of segment: Segment, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = try LineReader(path: segment.path, maxLineLength: Int(segment.bytes) + 1)
        try reader.forEachLine { line in
            guard case .bytes(let bytes, let position) = line else { return }
            try body(position.line - 1, bytes)
        }
    }

    /// Writes a copy of a finished segment without some of its lines, handing those to `removed`, and returns the copy.
    func removing(
        lines dropped: Set<Int>, from segment: Segment, removed: (Int, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Segment {
        let path = directory.file("\(segment.index)-kept.ndjson")
        let output = try OutputFile(path: path, exclusive: true, bufferSize: 1 << 16)
        var kept = Segment(key: segment.key, index: segment.index, path: path, digest: .zero, bytes: 0, count: 0)
        var hasher = SHA256Hasher()
        try Self.forEachLine(of: segment) { number, line in
            if dropped.contains(number) {
                try removed(number, line)
                return
            }
            try output.write(line)
            try Self.newline.withUnsafeBytes { newline in
                try output.write(newline)
                hasher.update(line)
                hasher.update(newline)
            }
            kept.bytes += Int64(line.count + 1)
            kept.count += 1
        }
        try output.close()
        kept.digest = hasher.finalize()
        return kept
    }

    private func handle(for file: File) throws -> OutputFile {
        if let handle = file.handle { return handle }
        if openFiles.count >= Self.maxOpenFiles, let victim = openFiles.indices.min(by: { openFiles[$0].lastUse < openFiles[$1].lastUse }) {
            try openFiles[victim].handle?.close()
            openFiles[victim].handle = nil
            openFiles.swapAt(victim, openFiles.count - 1)
            openFiles.removeLast()
        }
        let handle = try OutputFile(path: file.path, exclusive: !file.created, append: file.created, bufferSize: 1 << 16)
        file.created = true
        file.handle = handle
        openFiles.append(file)
        return handle
    }
}
