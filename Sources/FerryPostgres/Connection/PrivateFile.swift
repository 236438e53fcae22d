import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file of secrets (a password file, a client certificate's key), checked as libpq checks one.
enum PrivateFile {
    /// The file's permission bits when others than its owner may use it, else `nil`.
    ///
    /// `nil` also when the file cannot be looked at (reading it then says why). With `rootsGroupMayRead`, a file root
    /// owns may also be read by its group (libpq lets a key be 0640 there).
    static func openMode(_ path: String, rootsGroupMayRead: Bool = false) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return openMode(info, rootsGroupMayRead: rootsGroupMayRead)
    }

    /// ``openMode(_:rootsGroupMayRead:)`` of a file already looked at.
    static func openMode(_ info: stat, rootsGroupMayRead: Bool = false) -> mode_t? {
        let allowed: mode_t = rootsGroupMayRead && info.st_uid == 0 ? 0o040 : 0
        return info.st_mode & 0o077 & ~allowed == 0 ? nil : info.st_mode & 0o777
    }
}
