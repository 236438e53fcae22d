#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A buffered file writer over a POSIX descriptor.
public final class OutputFile {
    /// The path (or a name such as `<stdout>`) being written.
    public let path: String
    private let fd: Int32
    private let ownsDescriptor: Bool
    private var isClosed = false
    private var buffer: [UInt8] = []
    private let capacity: Int

    /// Creates or truncates a file.
    /// - Parameters:
    ///   - path: the file to write.
    ///   - exclusive: fail if the file exists (used for temporary names).
    ///   - append: append to an existing file instead of truncating it.
    ///   - bufferSize: bytes kept in memory before a write.
    public init(path: String, exclusive: Bool = false, append: Bool = false, bufferSize: Int = 1 << 18) throws {
        self.path = path
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC
        flags |= exclusive ? O_EXCL : 0
        flags |= append ? O_APPEND : O_TRUNC
        let descriptor = open(path, flags, 0o644)
        guard descriptor >= 0 else { throw SystemError.current.coreError("create", path: path, writing: true) }
        fd = descriptor
        ownsDescriptor = true
        capacity = bufferSize
        buffer.reserveCapacity(bufferSize)
    }

    /// Wraps an already open descriptor, such as standard output; it is flushed but never closed by this object.
    public init(borrowing descriptor: Int32, name: String, bufferSize: Int = 1 << 16) {
        path = name
        fd = descriptor
        ownsDescriptor = false
        capacity = bufferSize
        buffer.reserveCapacity(bufferSize)
    }

    deinit {
        if ownsDescriptor && !isClosed { Glibc.close(fd) }
    }

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > capacity {
            try flush()
            if bytes.count >= capacity {
                try writeDirect(bytes)
                return
            }
        }
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes.
    public func write<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        if let done: Void = try bytes.withContiguousStorageIfAvailable({ try write(UnsafeRawBufferPointer($0)) }) {
            return done
        }
        try Array(bytes).withUnsafeBytes { try write($0) }
    }

    /// Appends a string's UTF-8 bytes.
    public func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes buffered bytes to the file.
    public func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try writeDirect($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and asks the kernel to put the file on disk.
    public func sync() throws {
        try flush()
        try Self.sync(descriptor: fd, path: path)
    }

    /// Asks the kernel to put an open file or directory on disk; a filesystem that cannot (EINVAL, EROFS) is skipped.
    static func sync(descriptor fd: Int32, path: String) throws {
        guard fsync(fd) == 0 || errno == EINVAL || errno == EROFS else {
            throw SystemError.current.coreError("fsync", path: path, writing: true)
        }
    }

    /// Flushes and closes the file.
    ///
    /// Further writes fail.
    public func close() throws {
        guard !isClosed else { return }
        try flush()
        isClosed = true
        if ownsDescriptor, Glibc.close(fd) != 0 {
            throw SystemError.current.coreError("close", path: path, writing: true)
        }
    }

    private func writeDirect(_ bytes: UnsafeRawBufferPointer) throws {
        guard !isClosed else { throw CoreError(.writeFailed, "\(path): written after close") }
        guard var base = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let count = Glibc.write(fd, base, remaining)
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError.current.coreError("write", path: path, writing: true)
            }
            remaining -= count
            base += count
        }
    }
}
