#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What identifies a file's version without reading it: its identity, size, and modification and change times.
///
/// Two equal signatures taken at different times mean, as far as the filesystem tells, that nobody wrote the file in
/// between; a file written, replaced or truncated gets another one.
public struct FileSignature: Sendable, Hashable {
    /// Which file it is.
    public var identity: FileIdentity
    /// Its size in bytes.
    public var size: Int64
    /// Its modification time, in nanoseconds since 1970.
    public var modified: Int64
    /// Its status change time, in nanoseconds since 1970.
    public var changed: Int64
    /// Whether it is a regular file.
    public var isRegularFile: Bool

    /// The signature of the file at `path` (links followed); `nil` when nothing is there.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The signature of an open file.
    public init?(descriptorOf file: InputFile) {
        guard let info = file.status() else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        isRegularFile = info.st_mode & S_IFMT == S_IFREG
    }
}

/// The signatures of a few files (absent ones included), to tell afterwards whether any of them was written.
///
/// ```swift
/// let before = FileSnapshot(paths: [store, store + "-wal"])
/// … read the store in place …
/// if let changed = before.changedFile() { /* the reading may be inconsistent: run again */ }
/// ```
public struct FileSnapshot: Sendable, Hashable {
    /// Each path with its signature then (`nil`: no file).
    public let signatures: [String: FileSignature?]

    /// Takes the signatures of `paths` now.
    public init(paths: [String]) {
        var signatures: [String: FileSignature?] = [:]
        for path in paths { signatures[path] = FileSignature(path: path) }
        self.signatures = signatures
    }

    /// The first path (in sorted order) whose file was written, replaced, made or removed since; `nil` if none.
    public func changedFile() -> String? {
        signatures.keys.sorted().first { FileSignature(path: $0) != signatures[$0] ?? nil }
    }
}
