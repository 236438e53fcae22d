#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a lock file (`flock`), held until ``release()`` or until the lock is freed.
///
/// The kernel drops the lock when its holder exits, however it exits (`kill -9` included), so a lock is never left
/// stale; a lock file left by a killed holder is simply taken over. The file records the holder's process ID for the
/// message another process shows, and the holder removes it when it lets the lock go. It is a file of its own, never
/// the file it guards: closing any descriptor of an SQLite database would drop the POSIX locks SQLite holds on it.
///
/// ```swift
/// guard let lock = try FileLock.acquire(path: store + "-lock") else {
///     /* busy: FileLock.holder(of: store + "-lock") names the process */
/// }
/// defer { lock.release() }
/// ```
public final class FileLock {
    /// The lock file.
    public let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Takes the lock without waiting; `nil` when another holder has it (or keeps replacing the file).
    /// - Throws: ``CoreError`` when the lock file cannot be created or opened.
    public static func acquire(path: String) throws -> FileLock? {
        for _ in 0..<8 {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw SystemError.current.coreError("open lock file", path: path, writing: true) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let error = SystemError.current
                close(descriptor)
                if error.errno == EWOULDBLOCK { return nil }
                throw error.coreError("lock", path: path, writing: true)
            }
            // The holder before may have removed the file between our open and our lock: a lock on a removed file
            // guards nothing, so take the one at the path now.
            var held = stat()
            guard fstat(descriptor, &held) == 0, FileIdentity(path: path) == FileIdentity(status: held) else {
                close(descriptor)
                continue
            }
            // The holder's process ID, for whoever finds the lock taken (best effort: the lock itself is the flock).
            let text = Array("\(getpid())\n".utf8)
            if ftruncate(descriptor, 0) == 0 { _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } }
            return FileLock(path: path, descriptor: descriptor)
        }
        return nil
    }

    /// The process ID the holder of a lock file wrote, if it can be read.
    public static func holder(of path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let digits = buffer[..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int32(String(decoding: digits, as: UTF8.self))
    }

    /// Removes the lock file and lets the lock go; releasing again does nothing.
    public func release() {
        guard descriptor >= 0 else { return }
        // Removed while still held, so that no one takes a lock on it in between (see acquire).
        unlink(path)
        close(descriptor)
        descriptor = -1
    }
}
