import CDirectIO
import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Putting bytes before what a file already holds: the tail of a file written first (a bundle's assets, written while
/// its records were still being read) gets its head last.
extension OutputFile {
    /// The unit a run of prepended bytes comes in: every filesystem block size in common use divides it, which ext4's
    /// and XFS's insert needs.
    public static let prependUnit = 4096

    /// Whether the filesystem can shift a file's blocks (``insertHole(atStart:)``), tried on this file while it is
    /// empty: one unit is written, shifted and the file emptied again.
    /// - Throws: ``CoreError`` when the file is not empty, or writing fails.
    func canInsertHoles() throws -> Bool {
        try flush()
        guard position == 0, lseek(fd, 0, SEEK_END) == 0 else {
            throw CoreError(.writeFailed, "\(path): only an empty file is tried for shifting blocks")
        }
        let unit = Self.prependUnit
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: unit, alignment: BackgroundWrites.alignment)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 0)
        try writeAll(UnsafeRawBufferPointer(block), at: 0)
        let shifts = ferry_shift_range(fd, ferry_insert_range, 0, Int64(unit)) == 0
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw SystemError.current.coreError("empty", path: path, writing: true)
        }
        return shifts
    }

    /// Shifts everything written so far up by `length` bytes (a multiple of ``prependUnit``) without copying it, leaving
    /// a hole at the start; later writes still append at the end.
    /// - Returns: whether it was done; `false` when the filesystem cannot (only ext4 and XFS can, with blocks that
    ///   divide `length`), with the file unchanged.
    /// - Throws: ``CoreError`` when a buffered write fails or the filesystem fails otherwise (no space, I/O).
    func insertHole(atStart length: Int64) throws -> Bool {
        precondition(length > 0 && length % Int64(Self.prependUnit) == 0, "a hole of \(length) bytes is not a whole number of units")
        try flush()
        guard ferry_shift_range(fd, ferry_insert_range, 0, length) == 0 else {
            switch errno {
            case EOPNOTSUPP, ENOTSUP, EINVAL, ENOSYS, ENODEV, EPERM: return false
            default: throw SystemError.current.coreError("make room at the start", path: path, writing: true)
            }
        }
        guard lseek(fd, 0, SEEK_END) >= 0 else { throw SystemError.current.coreError("seek", path: path, writing: true) }
        return true
    }

    /// Takes `length` bytes (a multiple of ``prependUnit``) out of the file at `offset` (also one), shifting what
    /// follows down without copying it: the part of a hole made by ``insertHole(atStart:)`` that was not needed.
    /// - Throws: ``CoreError`` when the filesystem cannot (one that made the hole can).
    func removeRange(at offset: Int64, length: Int64) throws {
        try flush()
        guard ferry_shift_range(fd, ferry_collapse_range, offset, length) == 0 else {
            throw SystemError.current.coreError("take out the unused \(length) bytes at \(offset)", path: path, writing: true)
        }
        guard lseek(fd, 0, SEEK_END) >= 0 else { throw SystemError.current.coreError("seek", path: path, writing: true) }
    }

    /// Appends everything the file at `path` holds from `offset` on, in the kernel where it can (`copy_file_range`,
    /// which shares the blocks on filesystems that can), else through a buffer.
    /// - Throws: ``CoreError`` when reading or writing fails.
    func append(contentsOf path: String, from offset: Int64) throws {
        try flush()
        let source = try InputFile(path: path)
        var position = lseek(fd, 0, SEEK_END)
        guard position >= 0 else { throw SystemError.current.coreError("seek", path: self.path, writing: true) }
        var from = offset
        while true {
            let copied = ferry_copy_range(source.descriptor, from, fd, Int64(position), 1 << 30)
            if copied == 0 { break }
            if copied > 0 {
                from += copied
                position += off_t(copied)
                continue
            }
            if errno == EINTR { continue }
            guard [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, ENOTSUP].contains(errno) else {
                throw SystemError.current.coreError("copy \(path) into it", path: self.path, writing: true)
            }
            try appendByReading(source, from: from, at: Int64(position))
            break
        }
        guard lseek(fd, 0, SEEK_END) >= 0 else { throw SystemError.current.coreError("seek", path: self.path, writing: true) }
    }

    /// ``append(contentsOf:from:)`` through a buffer, for files the kernel will not copy between.
    private func appendByReading(_ source: InputFile, from offset: Int64, at position: Int64) throws {
        try Self.withAlignedBuffer { buffer in
            var from = offset
            var to = position
            while true {
                let count = try source.read(into: buffer, at: from)
                if count == 0 { return }
                try writeAll(UnsafeRawBufferPointer(rebasing: buffer[..<count]), at: to)
                from += Int64(count)
                to += Int64(count)
            }
        }
    }

    /// Writes all of `bytes` at `offset`; a direct write the filesystem refuses is made through the page cache.
    private func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var rest = bytes
        var at = offset
        var retriedBuffered = false
        while let base = rest.baseAddress, !rest.isEmpty {
            let count = pwrite(fd, base, rest.count, off_t(at))
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EINVAL && !retriedBuffered {
                    retriedBuffered = true
                    BackgroundWrites.clearFlag(DirectIO.openFlag, of: fd)
                    continue
                }
                throw SystemError.current.coreError("write", path: path, writing: true)
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            at += Int64(count)
        }
    }

    private static func withAlignedBuffer<T>(_ body: (UnsafeMutableRawBufferPointer) throws -> T) rethrows -> T {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: BackgroundWrites.alignment)
        defer { buffer.deallocate() }
        return try body(buffer)
    }
}
