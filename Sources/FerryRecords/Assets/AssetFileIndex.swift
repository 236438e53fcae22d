import FerryCore
import FerrySorting

/// The asset files a ``DirectoryAssetProvider`` has read or found, by digest, in bounded memory whatever their number.
///
/// Written by hand as a small log-structured index because its one job — millions of appends, then lookups by digest,
/// mostly in digest order — needs no database: the newest files are in a table in memory; a full table is sorted into
/// a run (an ``ExternalSortedSet`` in a scratch file, with a sparse index in memory), and a run is merged with the one
/// before it while it is at least half its size, so there are about log₂(files / table) runs and a lookup reads one
/// block of each. Paths are kept in a scratch file of their own. Not thread-safe.
final class AssetFileIndex {
    /// One file: fixed-size, so that runs can be sorted and searched on disk; ordered by digest, then by the order
    /// files were added (so the first file added with a digest is the one found).
    struct Entry: Comparable, BitwiseCopyable {
        var digest: SHA256Digest
        var order: Int64
        /// The version hashed (or found); its size is the asset's.
        var signature: FileSignature
        /// Whether the digest was computed from the file (rather than taken from its name).
        var verified: Bool
        /// Where its path (relative to the root) is in the path file.
        var pathOffset: Int64
        var pathLength: Int32

        static func < (lhs: Self, rhs: Self) -> Bool { (lhs.digest, lhs.order) < (rhs.digest, rhs.order) }
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.digest == rhs.digest && lhs.order == rhs.order }
    }

    private let directory: TemporaryDirectory
    private let paths: OutputFile
    private var pathReader: InputFile?
    private var pathBytes: Int64 = 0
    private var pathsFlushed = true
    /// The newest entries, by digest (the first added of each).
    private var table: [SHA256Digest: Entry] = [:]
    private var runs: [ExternalSortedSet<Entry>] = []
    /// The order the next file added gets.
    private var nextOrder: Int64 = 0
    private let tableLimit: Int

    /// An empty index with scratch files under `temporaryDirectory` (default `$TMPDIR`), keeping at most
    /// `tableLimit` entries in memory (about 100 bytes each, and as much again while a table is sorted).
    init(temporaryDirectory: String?, tableLimit: Int) throws {
        directory = try TemporaryDirectory(prefix: "ferry-asset-index", parent: temporaryDirectory)
        paths = try OutputFile(path: directory.file("paths"), exclusive: true, bufferSize: 1 << 16)
        self.tableLimit = max(1, tableLimit)
    }

    /// Adds a file; a digest already added keeps its first file.
    /// - Throws: ``CoreError`` when a scratch file cannot be written.
    func add(digest: SHA256Digest, path: String, signature: FileSignature, verified: Bool) throws {
        guard table[digest] == nil else { return }
        let bytes = Array(path.utf8)
        try paths.write(bytes)
        pathsFlushed = false
        table[digest] = Entry(
            digest: digest, order: nextOrder, signature: signature, verified: verified, pathOffset: pathBytes, pathLength: Int32(bytes.count))
        pathBytes += Int64(bytes.count)
        nextOrder += 1
        if table.count >= tableLimit { try spill() }
    }

    /// The path of the first file found with this identity, by visiting every entry (for the rare check that no
    /// output replaces an input).
    /// - Throws: ``CoreError`` when a scratch file cannot be read.
    func path(of identity: FileIdentity) throws -> String? {
        if let entry = table.values.first(where: { $0.signature.identity == identity }) { return try path(of: entry) }
        for run in runs {
            let cursor = run.makeCursor()
            while let entry = try cursor.next() {
                if entry.signature.identity == identity { return try path(of: entry) }
            }
        }
        return nil
    }

    /// The first file added with this digest.
    /// - Throws: ``CoreError`` when a scratch file cannot be read.
    func entry(for digest: SHA256Digest) throws -> Entry? {
        // Runs hold older entries than the table; the oldest run first, so that the first file added wins.
        for run in runs {
            if let found = try run.first(notBelow: Self.probe(digest)), found.digest == digest { return found }
        }
        return table[digest]
    }

    /// A file's path, relative to the root.
    /// - Throws: ``CoreError`` when the scratch file of paths cannot be read.
    func path(of entry: Entry) throws -> String {
        if !pathsFlushed {
            try paths.flush()
            pathsFlushed = true
        }
        let reader = try pathReader ?? InputFile(path: directory.file("paths"))
        pathReader = reader
        let bytes = try [UInt8](unsafeUninitializedCapacity: Int(entry.pathLength)) { buffer, initialized in
            try reader.read(exactly: UnsafeMutableRawBufferPointer(buffer), at: entry.pathOffset)
            initialized = buffer.count
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Sorts the table into a run, and merges the runs while the last is at least half the one before it.
    private func spill() throws {
        runs.append(try ExternalSortedSet(sortedDistinct: table.values.sorted(), prefix: Self.runPrefix, temporaryDirectory: directory.path))
        table.removeAll(keepingCapacity: true)
        while runs.count >= 2, runs[runs.count - 1].count * 2 >= runs[runs.count - 2].count {
            let merged = try ExternalSortedSet(
                merging: runs[runs.count - 2], runs[runs.count - 1], prefix: Self.runPrefix, temporaryDirectory: directory.path)
            runs.removeLast(2)
            runs.append(merged)
        }
    }

    private static let runPrefix = "ferry-asset-run"

    /// The first entry a digest can have.
    private static func probe(_ digest: SHA256Digest) -> Entry {
        let nothing = FileSignature(identity: FileIdentity(device: 0, inode: 0), size: 0, modified: 0, changed: 0, isRegularFile: false)
        return Entry(digest: digest, order: .min, signature: nothing, verified: false, pathOffset: 0, pathLength: 0)
    }
}
