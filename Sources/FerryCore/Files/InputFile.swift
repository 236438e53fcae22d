#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file opened for reading, with errors that name the file.
public final class InputFile: BufferReading {
    /// The path the file was opened with.
    public let path: String
    package private(set) var descriptor: Int32

    /// Opens a file for reading.
    /// - Throws: ``CoreError`` naming the file when it cannot be opened or is a directory.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current.coreError("open", path: path) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw CoreError(.readFailed, "\(path): is a directory, expected a file")
        }
        descriptor = fd
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// The file's status (`fstat`), or `nil` if it cannot be read.
    public func status() -> stat? {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? info : nil
    }

    /// Reads up to `buffer.count` bytes.
    /// - Returns: the number of bytes read; 0 at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let count = Glibc.read(descriptor, base, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw SystemError.current.coreError("read", path: path)
        }
    }

    /// The next `count` bytes, the first ones of a file just opened (fewer only where the file ends), for
    /// recognizing it by its ``MagicNumber``.
    public func readPrefix(_ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let filled = try buffer.withUnsafeMutableBytes { try read(filling: $0) }
        return Array(buffer[0..<filled])
    }

    /// Reads up to `buffer.count` bytes at `offset`, without moving the file position (`pread`).
    /// - Returns: the number of bytes read; fewer than asked only at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, base + done, buffer.count - done, off_t(offset) + off_t(done))
            if count > 0 {
                done += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw SystemError.current.coreError("pread", path: path)
            }
        }
        return done
    }

    /// Fills `buffer` with the bytes at `offset`.
    /// - Throws: ``CoreError`` when they cannot be read, or the file ends first.
    package func read(exactly buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws {
        let count = try read(into: buffer, at: offset)
        guard count == buffer.count else {
            throw CoreError(.readFailed, "\(path): ends before byte \(offset + Int64(buffer.count))")
        }
    }

    /// Reads the whole file, refusing files larger than `limit` bytes.
    public func readAll(limit: Int = 1 << 30) throws -> [UInt8] {
        var result = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try read(into: $0) }
            if count == 0 { return result }
            guard result.count + count <= limit else {
                throw CoreError(.readFailed, "\(path): larger than the \(limit)-byte limit for this kind of file")
            }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reads a whole file.
    public static func contents(of path: String, limit: Int = 1 << 30) throws -> [UInt8] {
        try InputFile(path: path).readAll(limit: limit)
    }
}
