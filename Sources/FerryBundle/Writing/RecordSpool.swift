import FerryCore
import FerryRecords
import FerrySorting

/// The records admitted to a bundle, kept in one scratch log until the bundle is written: filled while records arrive
/// in any order, read back by record type and zone in dependency order at the end.
///
/// Memory stays bounded whatever the number of records and of files (record types times zones):
/// - Lines are gathered per file in buffers of at most ``memoryLimit`` bytes in all; full buffers go to the log, each
///   as a *run* of consecutive lines of one file. Records mostly arrive grouped, so a file is mostly one or a few runs.
/// - At most ``maxActiveFiles`` files are *active* (have a buffer and a running SHA-256); when a new file would pass
///   that, the least recently used half stop being active. What each run and each file's hash hold is written to a
///   second scratch file, the run list, not kept.
/// - Runs are hashed and written by the ``SpoolLog`` on a queue of its own; a run of 64 KiB or more is written as one
///   Zstandard frame (``SpoolRun``), which a .tar.zst bundle takes as it is: records are compressed once, while they
///   are read, and the log holds about a tenth of their bytes.
/// - ``plan(ranks:dropping:temporaryDirectory:fileListMemoryLimit:rejected:)`` sorts the run list by file in bundle order (``ExternalByteSorter``) into a
///   ``SpoolPlan``. A file written as one active stretch has its SHA-256 already; one that stopped being active and
///   came back, or loses lines, is read back once and written again at the end of the log.
///
/// A line's place is its run and its line there (see ``place(run:line:)``), so that the rare line a finished bundle's
/// checks name can be read back.
final class RecordSpool {
    /// Which file a line belongs to.
    struct Key: Hashable, Sendable {
        var kind: BundleManifest.RecordFile.Kind
        var recordType: String?
        var zoneID: ZoneID
    }

    /// A file being filled: its buffered lines and the hash of everything it got since it became active.
    ///
    /// Its ``hash`` is updated by the log's queue, from the time a buffer is handed to it until ``RecordSpool/end(_:)``
    /// waits for that queue; everything else is touched only by the appending thread.
    private final class Active {
        let key: Key
        /// When this stretch of activity began, among all files': the order buffers are written and files set aside in.
        let stretch: Int
        let hash = SpoolLog.RunningHash()
        var bytes: Int64 = 0
        var count = 0
        /// The run being buffered, if any.
        var run: Int?
        var runLines = 0
        var buffer: [UInt8] = []
        var lastUse = 0

        init(key: Key, stretch: Int) {
            self.key = key
            self.stretch = stretch
        }
    }

    /// Bytes of lines buffered before they are all written to the log.
    let memoryLimit: Int
    /// The most files active at once.
    let maxActiveFiles: Int

    private let directory: TemporaryDirectory
    /// The lines, run after run, and the list of runs and of ends of stretches, in the order they happened.
    private let log: SpoolLog
    private var isOpen = true
    private var active: [Key: Active] = [:]
    private var buffered = 0
    private var nextRun = 0
    private var nextStretch = 0
    private var clock = 0
    /// The files of the last appends, the latest last.
    ///
    /// Records mostly come grouped, or alternate between a few types, so most appends find their file here by
    /// comparing keys, without hashing one (and copying it, which retains its strings). When types alternate record by
    /// record, keeping only the last file made every append a miss. Keys are compared in place, and files are
    /// unretained (``active`` holds them, and this list is emptied whenever a file leaves it): copying a key retained
    /// its strings, and retaining and releasing the file was a tenth of an append.
    private var recent: [(key: Key, file: Unmanaged<Active>)] = []
    private static let recentLimit = 8
    private var entry = ByteRecordWriter()
    private static let newline = UInt8(ascii: "\n")

    /// Creates an empty spool in a new scratch directory under `parent` (default `$TMPDIR`).
    init(parent: String?, memoryLimit: Int = 4 << 20, maxActiveFiles: Int = 4096) throws {
        directory = try TemporaryDirectory(prefix: "ferry-spool", parent: parent)
        log = try SpoolLog(directory: directory)
        self.memoryLimit = memoryLimit
        self.maxActiveFiles = max(2, maxActiveFiles)
    }

    /// Appends one line (without its newline) to the file of a kind, record type and zone (the key is made only for a
    /// file not among the latest).
    /// - Returns: where the line went: its run and its 0-based line number there (``runAndLine(of:)``).
    /// - Throws: ``BundleError`` past 2⁴⁰ runs, ``CoreError`` when a scratch file cannot be written.
    func append(_ line: UnsafeRawBufferPointer, kind: BundleManifest.RecordFile.Kind, recordType: String?, zoneID: ZoneID) throws -> FileLine {
        let found = recent.withUnsafeBufferPointer { recent in
            recent.indices.first { recent[$0].key.kind == kind && recent[$0].key.recordType == recordType && recent[$0].key.zoneID == zoneID }
                .map { recent[$0].file }
        }
        if let found { return try found._withUnsafeGuaranteedRef { file in try append(line, to: file) } }
        let key = Key(kind: kind, recordType: recordType, zoneID: zoneID)
        let file = try activate(key)
        if recent.count == Self.recentLimit { recent.removeFirst() }
        recent.append((key, Unmanaged.passUnretained(file)))
        return try append(line, to: file)
    }

    /// Appends one line to an active file.
    private func append(_ line: UnsafeRawBufferPointer, to file: Active) throws -> FileLine {
        if file.runLines > FileLine.maxFile {
            // A place holds at most this many lines of a run: the run ends here.
            try flush()
        }
        if file.run == nil {
            guard nextRun <= FileLine.maxLine else {
                throw BundleError(.writeFailed, "more than \(FileLine.maxLine + 1) runs of records in the scratch log")
            }
            file.run = nextRun
            file.runLines = 0
            nextRun += 1
        }
        let location = Self.place(run: file.run ?? 0, line: file.runLines)
        file.runLines += 1
        file.buffer.append(contentsOf: line)
        file.buffer.append(Self.newline)
        file.bytes += Int64(line.count + 1)
        file.count += 1
        clock += 1
        file.lastUse = clock
        buffered += line.count + 1
        if buffered >= memoryLimit { try flush() }
        return location
    }

    /// A key's active file, made active (a new stretch) if it is not.
    private func activate(_ key: Key) throws -> Active {
        if let existing = active[key] { return existing }
        if active.count >= maxActiveFiles { try deactivateOldest() }
        let file = Active(key: key, stretch: nextStretch)
        nextStretch += 1
        active[key] = file
        return file
    }

    /// A line's place as a ``FileLine``, which the ledger packs into 64 bits: the run in the 40-bit part (there may be far
    /// more runs than files) and the line in the 23-bit part (a run ends at that many lines).
    static func place(run: Int, line: Int) -> FileLine { FileLine(file: line, line: run) }

    /// The run and line of a place ``place(run:line:)`` made.
    static func runAndLine(of place: FileLine) -> (run: Int, line: Int) { (place.line, place.file) }

    /// Hands every buffer to the log, each as a run (hashed, maybe compressed and written on the log's queue), without
    /// waiting for it: the caller may do other work while the queue catches up, then ``finish()``.
    func flush() throws {
        guard isOpen else { return }
        // In stretch order, so the log's layout does not depend on the dictionary's.
        var buffers: [SpoolLog.Buffer] = []
        for file in active.values.sorted(by: { $0.stretch < $1.stretch }) where !file.buffer.isEmpty {
            entry.removeAll()
            entry.uint8(Self.runTag)
            Self.encode(file.key, into: &entry)
            entry.int64(Int64(file.run ?? 0))
            buffers.append(SpoolLog.Buffer(entry: entry.bytes, hash: file.hash, bytes: file.buffer))
            file.buffer = []
            file.run = nil
            file.runLines = 0
        }
        buffered = 0
        try log.store(buffers)
    }

    /// Ends the stretches of the least recently used half of the active files.
    private func deactivateOldest() throws {
        try flush()
        let oldest = active.values.sorted { $0.lastUse < $1.lastUse }.prefix(active.count / 2)
        for file in oldest.sorted(by: { $0.stretch < $1.stretch }) {
            try end(file)
            active[file.key] = nil
        }
        recent.removeAll()
    }

    /// Notes the end of a file's stretch: its hash, bytes and lines.
    private func end(_ file: Active) throws {
        // Every buffer of the file flushed so far is hashed, and listed before the end of its stretch.
        try log.sync()
        entry.removeAll()
        entry.uint8(Self.stretchEndTag)
        Self.encode(file.key, into: &entry)
        file.hash.hasher.finalize().withUnsafeBytes { entry.raw($0) }
        entry.int64(file.bytes)
        entry.int64(Int64(file.count))
        try log.appendEntry(entry.bytes)
    }

    /// Writes what is buffered and ends every stretch; nothing may be appended after this.
    func finish() throws {
        try flush()
        for file in active.values.sorted(by: { $0.stretch < $1.stretch }) { try end(file) }
        active = [:]
        recent.removeAll()
        isOpen = false
        try log.close()
    }

    /// Removes the scratch files (after ``finish()``, once they have been copied).
    func remove() {
        active = [:]
        recent.removeAll()
        directory.remove()
    }

    /// Removes the scratch files on another thread while `body` runs (after ``finish()``, once they have been copied).
    func remove<Result>(whileRunning body: () throws -> Result) rethrows -> Result {
        try directory.remove(whileRunning: body)
    }

    // MARK: - Reading back

    /// The lines at these places (after ``finish()``): for the few records a finished bundle's checks name.
    func lines(at places: Set<FileLine>) throws -> [FileLine: [UInt8]] {
        guard !places.isEmpty else { return [:] }
        let wanted = Dictionary(grouping: places.map(Self.runAndLine), by: \.run).mapValues { Set($0.map(\.line)) }
        let input = try InputFile(path: log.path)
        var found: [FileLine: [UInt8]] = [:]
        try log.runs.forEach { bytes in
            let entry = try RunEntry(bytes)
            guard case .run(let number, let run) = entry.kind, let lines = wanted[number] else { return }
            try Self.forEachLine(in: input, run: run) { index, line in
                if lines.contains(index) { found[Self.place(run: number, line: index)] = Array(line) }
            }
        }
        return found
    }

    /// Calls `body` with each line of a run of the log (without its newline) and its 0-based number there.
    static func forEachLine(in input: InputFile, run: SpoolRun, _ body: (Int, UnsafeRawBufferPointer) throws -> Void) throws {
        var splitter = LineSplitter()
        func emit(_ line: UnsafeRawBufferPointer, _ number: Int) throws { try body(number - 1, line) }
        if run.isCompressed {
            // At most ``SpoolRun/largestCompressed`` bytes: read whole.
            try run.bytes(in: input).withUnsafeBytes { try splitter.feed($0, emit) }
        } else {
            // Possibly long: read a chunk at a time.
            var chunk = [UInt8](repeating: 0, count: Int(min(run.size, 1 << 20)))
            var position = run.offset
            while position < run.offset + run.size {
                let count = Int(min(Int64(chunk.count), run.offset + run.size - position))
                try chunk.withUnsafeMutableBytes { chunk in
                    let piece = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<count])
                    try input.read(exactly: piece, at: position)
                    try splitter.feed(UnsafeRawBufferPointer(piece), emit)
                }
                position += Int64(count)
            }
        }
        guard !splitter.hasPartialLine else {
            throw BundleError(.readFailed, "\(input.path): a run of the scratch log ends inside a line")
        }
    }

    // MARK: - Planning

    /// Sorts the runs by file, in bundle order, and works out each file's size, lines and SHA-256.
    /// - Parameters:
    ///   - ranks: each record type's place in the dependency order.
    ///   - dropping: the lines to leave out (by run, then line in the run), each with its origin.
    ///   - fileListMemoryLimit: files listed in memory before the list goes to a scratch file.
    ///   - rejected: called with each line left out and its origin.
    /// - Throws: ``CoreError`` when a scratch file cannot be read or written, or what `rejected` throws.
    func plan(
        ranks: [String: Int], dropping: [Int: [Int: Int64]], temporaryDirectory: String?, fileListMemoryLimit: Int = 4096,
        rejected: (UnsafeRawBufferPointer, Int64) throws -> Void
    ) throws -> SpoolPlan {
        var rewritten: Set<Key> = []
        if !dropping.isEmpty {
            try log.runs.forEach { bytes in
                let run = try RunEntry(bytes)
                if case .run(let number, _) = run.kind, dropping[number] != nil { rewritten.insert(run.key) }
            }
        }
        let sorted = ExternalByteSorter(prefix: "ferry-spool-runs", temporaryDirectory: temporaryDirectory)
        var sortKey = ByteRecordWriter()
        try log.runs.forEach { bytes in
            let run = try RunEntry(bytes)
            sortKey.removeAll()
            Self.encodeSortKey(run.key, rank: run.key.recordType.flatMap { ranks[$0] }, into: &sortKey)
            // A file's stretch ends before its runs, and its runs in the order they were written.
            switch run.kind {
            case .stretchEnd:
                sortKey.uint8(0)
                sortKey.int64(0)
            case .run(let number, _):
                sortKey.uint8(1)
                sortKey.int64(Int64(number))
            }
            sortKey.raw(bytes)
            try sorted.append(sortKey.bytes)
        }
        let builder = try SpoolPlan.Builder(temporaryDirectory: temporaryDirectory, fileListMemoryLimit: fileListMemoryLimit)
        let input = try InputFile(path: log.path)
        // Files read back and written again go at the end of the log, as they are.
        let tail = try OutputFile(path: log.path, append: true, bufferSize: 1 << 16)
        var logSize = log.size
        var group: Key?
        /// The file's stretches so far, and the first one's hash, bytes and lines.
        var stretches = 0
        var first: (digest: SHA256Digest, bytes: Int64, count: Int)?
        /// The file's runs are copied as they are (`nil`), or its lines written again from `offset`.
        var rewrite: (hasher: SHA256Hasher, offset: Int64, bytes: Int64, count: Int)?
        var started = false
        func endGroup() throws {
            guard let key = group, let done = rewrite else { return }
            rewrite = nil
            logSize += done.bytes
            guard done.count > 0 else { return }
            try builder.file(key, count: done.count, bytes: done.bytes, digest: done.hasher.finalize())
            try builder.run(.plain(offset: done.offset, size: done.bytes))
        }
        try sorted.forEachSorted { bytes in
            // The entry as the spool wrote it follows the sort key.
            let run = try RunEntry(bytes, sortKeyed: true)
            if run.key != group {
                try endGroup()
                group = run.key
                stretches = 0
                first = nil
                started = false
            }
            switch run.kind {
            case .stretchEnd(let digest, let bytes, let count):
                stretches += 1
                if first == nil { first = (digest, bytes, count) }
            case .run(let number, let stored):
                if !started {
                    // The stretches' ends sort before the runs: the file's hash is known if it had one stretch.
                    started = true
                    if stretches == 1, !rewritten.contains(run.key), let only = first {
                        try builder.file(run.key, count: only.count, bytes: only.bytes, digest: only.digest)
                    } else {
                        rewrite = (SHA256Hasher(), logSize, 0, 0)
                    }
                }
                guard rewrite != nil else { return try builder.run(stored) }
                // Several stretches, or lines to leave out: read back and written again as one run.
                let dropped = dropping[number] ?? [:]
                try Self.forEachLine(in: input, run: stored) { index, line in
                    if let origin = dropped[index] { return try rejected(line, origin) }
                    try tail.write(line)
                    try withUnsafeBytes(of: Self.newline) { newline in
                        try tail.write(newline)
                        rewrite?.hasher.update(line)
                        rewrite?.hasher.update(newline)
                    }
                    rewrite?.bytes += Int64(line.count + 1)
                    rewrite?.count += 1
                }
            }
        }
        try endGroup()
        try tail.close()
        sorted.reset()
        return try builder.finish(logPath: log.path)
    }

    // MARK: - Encoding

    private static let runTag: UInt8 = 1
    private static let stretchEndTag: UInt8 = 0

    /// What the run list says of one run or one stretch's end.
    private struct RunEntry {
        enum Kind {
            case run(number: Int, run: SpoolRun)
            case stretchEnd(digest: SHA256Digest, bytes: Int64, count: Int)
        }
        var key: Key
        var kind: Kind

        /// Reads an entry, after its sort key when `sortKeyed`.
        init(_ bytes: UnsafeRawBufferPointer, sortKeyed: Bool = false) throws {
            var reader = ByteRecordReader(bytes)
            if sortKeyed {
                _ = try reader.uint8()
                _ = try reader.uint32()
                _ = try reader.key()
                _ = try reader.key()
                _ = try reader.key()
                _ = try reader.uint8()
                _ = try reader.int64()
            }
            let tag = try reader.uint8()
            let kind: BundleManifest.RecordFile.Kind = try reader.uint8() == 0 ? .records : .deletions
            let type = try reader.text()
            let zone = ZoneID(zoneName: try reader.text(), ownerName: try reader.text())
            key = Key(kind: kind, recordType: kind == .records ? type : nil, zoneID: zone)
            if tag == RecordSpool.runTag {
                self.kind = .run(number: Int(try reader.int64()), run: try SpoolRun(reading: &reader))
            } else {
                guard let digest = SHA256Digest(bytes: try reader.raw(32)) else {
                    throw BundleError(.readFailed, "the spool's run list is damaged")
                }
                self.kind = .stretchEnd(digest: digest, bytes: try reader.int64(), count: Int(try reader.int64()))
            }
        }
    }

    private static func encode(_ key: Key, into entry: inout ByteRecordWriter) {
        entry.uint8(key.kind == .records ? 0 : 1)
        entry.text(key.recordType ?? "")
        entry.text(key.zoneID.zoneName)
        entry.text(key.zoneID.ownerName)
    }

    /// Bytes that order files as the bundle does: records before deletions, record types in dependency order, zones
    /// in order.
    private static func encodeSortKey(_ key: Key, rank: Int?, into entry: inout ByteRecordWriter) {
        entry.uint8(key.kind == .records ? 0 : 1)
        entry.uint32(key.kind == .records ? UInt32(clamping: rank ?? Int(UInt32.max)) : 0)
        entry.key(key.recordType ?? "")
        entry.key(key.zoneID.zoneName)
        entry.key(key.zoneID.ownerName)
    }
}
