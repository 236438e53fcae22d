#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A buffered file writer over a POSIX descriptor.
public final class OutputFile {
    /// The path (or a name such as `<stdout>`) being written.
    public let path: String
    package let fd: Int32
    private let ownsDescriptor: Bool
    package private(set) var isClosed = false
    private var buffer: [UInt8] = []
    private let capacity: Int
    /// Where full buffers are written when the file writes in the background, and the one being filled.
    private let background: BackgroundWrites?
    private var current: BackgroundWrites.Buffer?
    /// The bytes written through this object so far.
    public private(set) var position: Int64 = 0

    /// Creates or truncates a file.
    /// - Parameters:
    ///   - path: the file to write.
    ///   - exclusive: fail if the file exists (used for temporary names).
    ///   - append: append to an existing file instead of truncating it.
    ///   - truncate: whether to empty an existing file (`false` writes over it from its start, for
    ///     ``AtomicOutputFile/prepend(atMost:inPlace:_:)``).
    ///   - bufferSize: bytes kept in memory before a write (default: 1 MiB when writing in the background, else 256 KiB).
    ///   - writesInBackground: write full buffers on a thread of their own (``BackgroundWrites``), four of
    ///     `bufferSize` in all, so that the caller does not wait for the kernel; ``flush()``, ``sync()`` and
    ///     ``close()`` wait for them, and a write that failed is reported by the next call.
    public convenience init(
        path: String, exclusive: Bool = false, append: Bool = false, truncate: Bool = true, bufferSize: Int? = nil,
        writesInBackground: Bool = false
    ) throws {
        try self.init(
            path: path, exclusive: exclusive, append: append, truncate: truncate, bufferSize: bufferSize,
            writesInBackground: writesInBackground, directFlag: 0)
    }

    /// Opens a file for writing, around the page cache when `directFlag` is the platform's `O_DIRECT` (see
    /// FerryDirectIO, which knows it) and the filesystem takes it.
    package init(
        path: String, exclusive: Bool = false, append: Bool = false, truncate: Bool = true, bufferSize: Int? = nil,
        writesInBackground: Bool = false, directFlag: Int32
    ) throws {
        self.path = path
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC
        flags |= exclusive ? O_EXCL : 0
        flags |= append ? O_APPEND : truncate ? O_TRUNC : 0
        // Direct writes need aligned offsets, which a file appended to does not start at.
        let wantsDirect = writesInBackground && directFlag != 0 && !append
        var descriptor = open(path, flags | (wantsDirect ? directFlag : 0), 0o644)
        var isDirect = wantsDirect
        if descriptor < 0 && wantsDirect && errno == EINVAL {
            // A filesystem without direct I/O refuses the flag when the file is opened (nothing was created).
            descriptor = open(path, flags, 0o644)
            isDirect = false
        }
        guard descriptor >= 0 else { throw SystemError.current.coreError("create", path: path, writing: true) }
        fd = descriptor
        ownsDescriptor = true
        let bufferSize = bufferSize ?? (writesInBackground ? 1 << 20 : 1 << 18)
        capacity = bufferSize
        if writesInBackground {
            background = BackgroundWrites(descriptor: descriptor, path: path, depth: 4, capacity: bufferSize, directFlag: isDirect ? directFlag : 0)
        } else {
            background = nil
            buffer.reserveCapacity(bufferSize)
        }
    }

    /// Wraps an already open descriptor, such as standard output; it is flushed but never closed by this object.
    public init(borrowing descriptor: Int32, name: String, bufferSize: Int = 1 << 16) {
        path = name
        fd = descriptor
        ownsDescriptor = false
        capacity = bufferSize
        background = nil
        buffer.reserveCapacity(bufferSize)
    }

    deinit {
        // No write may reach the descriptor once it is closed (or reused by another file).
        background?.abandon()
        if ownsDescriptor && !isClosed { Glibc.close(fd) }
    }

    /// Appends bytes.
    @usableFromInline package func write(_ bytes: UnsafeRawBufferPointer) throws {
        position += Int64(bytes.count)
        if let background {
            try write(bytes, through: background)
            return
        }
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

    /// Appends `count` bytes that `body` puts straight into the file's buffers, for bytes read from elsewhere (a file
    /// copied into this one): they are not copied again.
    /// - Parameter body: fills the buffer it is given (or a part of it, at least one byte) and returns how many bytes
    ///   it put there; called until `count` bytes are in.
    /// - Throws: ``CoreError`` when a write fails, or what `body` throws.
    package func fill(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        guard let background else {
            // Without background writes, through a buffer of its own.
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: min(count, 1 << 16), alignment: 16)
            defer { scratch.deallocate() }
            var left = count
            while left > 0 {
                let filled = try body(UnsafeMutableRawBufferPointer(rebasing: scratch[..<min(left, scratch.count)]))
                precondition(filled > 0 && filled <= min(left, scratch.count), "OutputFile.fill: \(filled) bytes filled")
                try write(UnsafeRawBufferPointer(rebasing: scratch[..<filled]))
                left -= filled
            }
            return
        }
        guard !isClosed else { throw CoreError(.writeFailed, "\(path): written after close") }
        var left = count
        while left > 0 {
            let filling = try current ?? background.take()
            current = filling
            let room = min(left, filling.memory.count - filling.count)
            let filled = try body(UnsafeMutableRawBufferPointer(rebasing: filling.memory[filling.count..<(filling.count + room)]))
            precondition(filled > 0 && filled <= room, "OutputFile.fill: \(filled) bytes filled of \(room)")
            filling.count += filled
            position += Int64(filled)
            left -= filled
            if filling.isFull {
                current = nil
                try background.submit(filling)
            }
        }
    }

    /// Fills buffers and hands each full one over, however large `bytes` is.
    private func write(_ bytes: UnsafeRawBufferPointer, through background: BackgroundWrites) throws {
        guard !isClosed else { throw CoreError(.writeFailed, "\(path): written after close") }
        var rest = bytes
        while !rest.isEmpty {
            let filling = try current ?? background.take()
            current = filling
            let count = min(rest.count, filling.memory.count - filling.count)
            UnsafeMutableRawBufferPointer(rebasing: filling.memory[filling.count..<(filling.count + count)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[..<count]))
            filling.count += count
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if filling.isFull {
                current = nil
                try background.submit(filling)
            }
        }
    }

    /// Writes buffered bytes to the file (and, when it writes in the background, waits until they are written).
    public func flush() throws {
        if let background {
            guard !isClosed else { return }
            if let current, current.count > 0 {
                self.current = nil
                try background.submit(current)
            }
            try background.drain()
            return
        }
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
        let (_, error) = Self.writeAll(bytes, to: fd)
        if error != 0 { throw SystemError(errno: error).coreError("write", path: path, writing: true) }
    }

    /// Writes all of `bytes` to a descriptor, retrying after signals.
    /// - Returns: the bytes written, and 0 or the `errno` of the write that failed.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> (written: Int, error: Int32) {
        guard var base = bytes.baseAddress else { return (0, 0) }
        var remaining = bytes.count
        while remaining > 0 {
            let count = Glibc.write(descriptor, base, remaining)
            if count < 0 {
                if errno == EINTR { continue }
                return (bytes.count - remaining, errno)
            }
            remaining -= count
            base += count
        }
        return (bytes.count, 0)
    }
}
