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
    public private(set) var temporaryPath: String
    /// The directory both paths are in.
    private let directory: String
    /// The writer for the temporary file.
    public private(set) var file: OutputFile
    private var token: Int
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
        directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        (file, temporaryPath) = try Self.create(beside: path, in: directory, role: role, writesInBackground: writesInBackground, direct: direct)
        token = CleanupRegistry.register(temporaryPath, isDirectory: false)
    }

    deinit {
        if !finished { discard() }
    }

    /// Creates a temporary file with a fresh name beside `path`.
    /// - Throws: ``CoreError/Code/writeFailed`` (exit 73) naming `path`, not the temporary name, when the file cannot
    ///   be made there: a missing directory, no permission, a read-only filesystem.
    private static func create(
        beside path: String, in directory: String, role: String, writesInBackground: Bool, direct: Bool
    ) throws -> (OutputFile, String) {
        let name = URL(fileURLWithPath: path).lastPathComponent
        var attempt = 0
        while true {
            let candidate = "\(directory)/.\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
            do {
                let file = try OutputFile(path: candidate, exclusive: true, writesInBackground: writesInBackground, direct: direct)
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

    /// Whether ``prepend(atMost:inPlace:_:)`` can shift the file's bytes in place here (ext4, XFS), rather than write
    /// the file again; tried on the temporary file, which must be empty still.
    /// - Throws: ``CoreError`` when something was written already, or the try fails to write.
    public func canPrependInPlace() throws -> Bool {
        try file.canInsertHoles()
    }

    /// Writes a head of at most `bound` bytes, a multiple of ``OutputFile/prependUnit`` long, before everything
    /// written so far.
    ///
    /// On ext4 and XFS the bytes written so far stay where they are on disk and are only shifted in the file: a hole of
    /// `bound` bytes (rounded up to a unit) is made at the start, `write` fills it from the start, and what it left
    /// unused is taken out again (`fallocate`'s insert and collapse). Elsewhere the head goes into a new temporary file
    /// and the old bytes are copied after it (in the kernel where it can, by reference on filesystems that share
    /// blocks). Either way the file ends up the same, and later writes append to it.
    /// - Parameters:
    ///   - bound: the most bytes `write` writes.
    ///   - inPlace: whether to shift the bytes in place where the filesystem can (`false` always writes a new file).
    ///   - write: writes the head into the file it is given (from its start, with direct writes in the background), and
    ///     must leave its ``OutputFile/position`` at a multiple of ``OutputFile/prependUnit`` no larger than `bound`.
    /// - Throws: ``CoreError`` when writing fails or `write` wrote too much or an unaligned length; what `write`
    ///   throws. The temporary file is then left for ``discard()``.
    public func prepend(atMost bound: Int64, inPlace: Bool = true, _ write: (OutputFile) throws -> Void) throws {
        precondition(!finished, "AtomicOutputFile.prepend after commit or discard")
        let unit = Int64(OutputFile.prependUnit)
        let hole = max(unit, (bound + unit - 1) / unit * unit)
        if inPlace, try file.insertHole(atStart: hole) {
            let head = try OutputFile(path: temporaryPath, truncate: false, writesInBackground: true, direct: true)
            try write(head)
            try head.close()
            let length = try Self.checkHead(head, bound: bound, unit: unit)
            if length < hole { try file.removeRange(at: length, length: hole - length) }
            return
        }
        let (replacement, replacementPath) = try Self.create(beside: path, in: directory, role: role, writesInBackground: true, direct: true)
        let replacementToken = CleanupRegistry.register(replacementPath, isDirectory: false)
        do {
            try write(replacement)
            try replacement.flush()
            _ = try Self.checkHead(replacement, bound: bound, unit: unit)
            try file.flush()
            try replacement.append(contentsOf: temporaryPath, from: 0)
        } catch {
            try? replacement.close()
            unlink(replacementPath)
            CleanupRegistry.unregister(replacementToken)
            throw error
        }
        try? file.close()
        unlink(temporaryPath)
        CleanupRegistry.unregister(token)
        (file, temporaryPath, token) = (replacement, replacementPath, replacementToken)
    }

    /// The length of a head ``prepend(atMost:inPlace:_:)`` was given, checked.
    private static func checkHead(_ head: OutputFile, bound: Int64, unit: Int64) throws -> Int64 {
        guard head.position <= bound, head.position % unit == 0 else {
            throw CoreError(
                .writeFailed, "\(head.path): a head of \(head.position) bytes was written, not a multiple of \(unit) up to \(bound)")
        }
        return head.position
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
