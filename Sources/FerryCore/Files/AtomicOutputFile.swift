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
    public package(set) var temporaryPath: String
    /// The directory both paths are in.
    package let directory: String
    /// The writer for the temporary file.
    public package(set) var file: OutputFile
    package var token: Int
    package var finished = false
    /// The run's inputs and outputs, which the rename may not replace, and what this output is called in errors.
    private let files: RunFiles?
    package let role: String

    /// Starts writing `path` under a temporary name beside it.
    /// - Parameters:
    ///   - files: the run's inputs and outputs: `path` is claimed there when the file is opened, and checked again
    ///     before the rename, so that the output never replaces an input or another output.
    ///   - role: what the output is, for errors ("the bundle").
    ///   - writesInBackground: whether ``file`` writes its full buffers on a thread of its own (``OutputFile``).
    /// - Throws: ``CoreError`` when the directory does not exist or is not writable, or when `path` names one of
    ///   `files` (`outputReplacesInput`).
    public convenience init(path: String, files: RunFiles? = nil, as role: String = "the output", writesInBackground: Bool = false) throws {
        try self.init(path: path, files: files, as: role, writesInBackground: writesInBackground, directFlag: 0)
    }

    /// Starts writing `path` under a temporary name beside it, around the page cache when `directFlag` is the
    /// platform's `O_DIRECT` (FerryDirectIO knows it).
    package init(path: String, files: RunFiles? = nil, as role: String = "the output", writesInBackground: Bool, directFlag: Int32) throws {
        self.path = path
        self.files = files
        self.role = role
        // Claiming checks the destination too.
        if let files { try files.claim(output: path, as: role) } else { try Self.checkDestination(path, as: role) }
        directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        (file, temporaryPath) = try Self.create(
            beside: path, in: directory, role: role, writesInBackground: writesInBackground, directFlag: directFlag)
        token = CleanupRegistry.register(temporaryPath, isDirectory: false)
    }

    deinit {
        if !finished { discard() }
    }

    /// Creates a temporary file with a fresh name beside `path`.
    /// - Throws: ``CoreError/Code/writeFailed`` (exit 73) naming `path`, not the temporary name, when the file cannot
    ///   be made there: a missing directory, no permission, a read-only filesystem.
    package static func create(
        beside path: String, in directory: String, role: String, writesInBackground: Bool, directFlag: Int32
    ) throws -> (OutputFile, String) {
        let name = URL(fileURLWithPath: path).lastPathComponent
        var attempt = 0
        while true {
            let candidate = "\(directory)/.\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
            do {
                let file = try OutputFile(path: candidate, exclusive: true, writesInBackground: writesInBackground, directFlag: directFlag)
                return (file, candidate)
            } catch let error as CoreError where (error.cause as? SystemError)?.errno == EEXIST && attempt < 8 {
                attempt += 1
            } catch let error as CoreError {
                let why: String
                switch (error.cause as? SystemError)?.errno {
                case ENOENT, ENOTDIR:
                    var status = stat()
                    why = stat(directory, &status) == 0 ? "files cannot be created in \(directory)" : "the directory \(directory) does not exist"
                case EACCES, EPERM: why = "permission denied in \(directory)"
                case EROFS: why = "\(directory) is on a read-only filesystem"
                default: why = (error.cause as? SystemError)?.description ?? error.message
                }
                throw CoreError(
                    .writeFailed, "\(path): cannot create \(role) there: \(why); write it somewhere else", cause: error.cause ?? error)
            }
        }
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
