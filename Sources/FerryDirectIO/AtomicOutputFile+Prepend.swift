import FerryCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension AtomicOutputFile {
    /// Starts writing `path` under a temporary name beside it; with `direct`, around the page cache where the
    /// filesystem allows it (`O_DIRECT`, with `writesInBackground`), for large files nobody reads back soon (a bundle).
    public convenience init(path: String, files: RunFiles? = nil, as role: String = "the output", writesInBackground: Bool, direct: Bool) throws {
        try self.init(path: path, files: files, as: role, writesInBackground: writesInBackground, directFlag: direct ? DirectIO.openFlag : 0)
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
            let head = try OutputFile(path: temporaryPath, truncate: false, writesInBackground: true, directFlag: DirectIO.openFlag)
            try write(head)
            try head.close()
            let length = try Self.checkHead(head, bound: bound, unit: unit)
            if length < hole { try file.removeRange(at: length, length: hole - length) }
            return
        }
        let (replacement, replacementPath) = try Self.create(
            beside: path, in: directory, role: role, writesInBackground: true, directFlag: DirectIO.openFlag)
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
    static func checkHead(_ head: OutputFile, bound: Int64, unit: Int64) throws -> Int64 {
        guard head.position <= bound, head.position % unit == 0 else {
            throw CoreError(
                .writeFailed, "\(head.path): a head of \(head.position) bytes was written, not a multiple of \(unit) up to \(bound)")
        }
        return head.position
    }
}
