import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An output file written under a temporary name in the destination's directory and renamed into place only when
/// complete, so readers never see a half-written file and an interrupted run leaves the old file untouched.
public final class AtomicOutputFile {
    /// The final path.
    public let path: String
    /// The temporary path being written.
    public let temporaryPath: String
    /// The directory both paths are in.
    private let directory: String
    /// The writer for the temporary file.
    public let file: OutputFile
    private let token: Int
    private var finished = false

    /// Starts writing `path` under a temporary name beside it.
    /// - Throws: ``CoreError`` when the directory does not exist or is not writable.
    public init(path: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        var attempt = 0
        while true {
            let candidate = "\(directory)/.\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
            do {
                file = try OutputFile(path: candidate, exclusive: true)
                temporaryPath = candidate
                break
            } catch let error as CoreError where error.code == .writeFailed && attempt < 8 {
                attempt += 1
            }
        }
        token = CleanupRegistry.register(temporaryPath, isDirectory: false)
    }

    deinit {
        if !finished { discard() }
    }

    /// Flushes, syncs and renames the temporary file to the final path, then syncs the directory so that the rename
    /// survives a crash too.
    public func commit() throws {
        guard !finished else { return }
        do {
            try file.sync()
            try file.close()
            guard rename(temporaryPath, path) == 0 else {
                throw SystemError.current.coreError("rename to \(path)", path: temporaryPath, writing: true)
            }
        } catch {
            discard()
            throw error
        }
        finished = true
        CleanupRegistry.unregister(token)
        try syncDirectory()
    }

    /// Syncs the directory's entries.
    private func syncDirectory() throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current.coreError("open directory", path: directory, writing: true) }
        defer { _ = close(fd) }
        try OutputFile.sync(descriptor: fd, path: directory)
    }

    /// Deletes the temporary file; the final path is left as it was.
    public func discard() {
        guard !finished else { return }
        finished = true
        try? file.close()
        unlink(temporaryPath)
        CleanupRegistry.unregister(token)
    }
}
