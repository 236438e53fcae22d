#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which file a path names: its device and inode, links followed.
///
/// Two paths name the same file exactly when their identities are equal, however they are spelled: through
/// symbolic links, `..`, or hard links.
///
/// ```swift
/// if FileIdentity(path: output) == FileIdentity(path: input) { /* writing output would replace input */ }
/// ```
public struct FileIdentity: Hashable, Sendable, BitwiseCopyable {
    /// The device the file is on.
    public var device: UInt64
    /// The file's inode on that device.
    public var inode: UInt64

    /// The identity of a device and inode pair, as `stat` gives them.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The identity of the file at `path` (links followed); `nil` when nothing is there.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(status: info)
    }

    /// The identity a file's status gives.
    init(status info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}
