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
    /// The run's inputs and outputs, which the rename may not replace, and what this output is called in errors.
    private let files: RunFiles?
    private let role: String

    /// Starts writing `path` under a temporary name beside it.
    /// - Parameters:
    ///   - files: the run's inputs and outputs: `path` is claimed there when the file is opened, and checked again
    ///     before the rename, so that the output never replaces an input or another output.
    ///   - role: what the output is, for errors ("the bundle").
    ///   - writesInBackground: whether ``file`` writes its full buffers on a thread of its own (``OutputFile``).
    ///   - direct: with `writesInBackground`, whether it writes around the page cache where it can (``OutputFile``).
    /// - Throws: ``CoreError`` when the directory does not exist or is not writable, or when `path` names one of
    ///   `files` (`outputReplacesInput`).
    public init(
        path: String, files: RunFiles? = nil, as role: String = "the output", writesInBackground: Bool = false, direct: Bool = false
    ) throws {
        self.path = path
        self.files = files
        self.role = role
        // Claiming checks the destination too.
        if let files { try files.claim(output: path, as: role) } else { try Self.checkDestination(path, as: role) }
        let url = URL(fileURLWithPath: path)
        directory = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        var attempt = 0
        while true {
            let candidate = "\(directory)/.\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
            do {
                file = try OutputFile(path: candidate, exclusive: true, writesInBackground: writesInBackground, direct: direct)
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

    /// Refuses a path where no output file can go: an existing directory, or one in a directory that does not exist.
    /// - Parameter makesDirectory: whether the caller creates the directory when it is missing (then only the path
    ///   itself is checked).
    /// - Throws: ``CoreError`` (`writeFailed`).
    public static func checkDestination(_ path: String, as role: String = "the output", makesDirectory: Bool = false) throws {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw CoreError(.writeFailed, "\(path) is a directory; give \(role) the path of a file")
        }
        if makesDirectory { return }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CoreError(.writeFailed, "\(directory) is not a directory; create it, or give \(role) another path")
        }
    }

    /// Flushes, syncs and renames the temporary file to the final path, then syncs the directory so that the rename
    /// survives a crash too.
    public func commit() throws {
        guard !finished else { return }
        do {
            // An input found during the run (an asset) may be the file the rename would replace.
            try files?.check(output: path, as: role)
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
