#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What identifies a file's version without reading it: its identity, size, and modification and change times.
///
/// Two equal signatures taken at different times mean, as far as the filesystem tells, that nobody wrote the file in
/// between; a file written, replaced or truncated gets another one.
public struct FileSignature: Sendable, Hashable, BitwiseCopyable {
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

    /// A signature from its parts.
    public init(identity: FileIdentity, size: Int64, modified: Int64, changed: Int64, isRegularFile: Bool) {
        self.identity = identity
        self.size = size
        self.modified = modified
        self.changed = changed
        self.isRegularFile = isRegularFile
    }

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
        identity = FileIdentity(status: info)
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        isRegularFile = info.st_mode & S_IFMT == S_IFREG
    }
}
