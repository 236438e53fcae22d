import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes an ``OutputFile``'s buffers to its descriptor on a serial queue of their own, in the order they were filled,
/// optionally around the page cache (`O_DIRECT`).
///
/// Copying into the page cache is the costliest step of writing a large file on the machines measured: the kernel
/// takes a fresh page for every 4 KiB, on the thread that everything else waits for (the one admitting records, or the
/// one feeding the compressor). Here the writes run beside that thread, and a direct write skips the copy.
///
/// Buffers are allocated once, aligned for direct I/O, and reused: the owner fills one (``take()``), hands it over
/// (``submit(_:)``) and takes the next, waiting while all of them are in flight, so memory stays bounded. Direct
/// writes need aligned sizes and offsets, so the first buffer that is not full (the end, or a flush in the middle)
/// and any write the filesystem refuses with `EINVAL` turn them off for the rest of the file: those
/// bytes, and everything after, go through the page cache as before. A failed write is reported by the next call
/// that takes a buffer, hands one over or drains, and nothing after it is written.
package final class BackgroundWrites: @unchecked Sendable {
    /// A buffer aligned for direct I/O: filled by the file's owner, then written by the queue.
    final class Buffer: @unchecked Sendable {
        let memory: UnsafeMutableRawBufferPointer
        var count = 0
        var isFull: Bool { count == memory.count }

        init(capacity: Int) { memory = .allocate(byteCount: capacity, alignment: BackgroundWrites.alignment) }
        deinit { memory.deallocate() }
    }

    /// The alignment of buffers, sizes and offsets that direct writes need (the page size covers every block size).
    package static let alignment = 4096

    private let queue = DispatchQueue(label: "ferry.output-file")
    /// Buffers not in flight; `available` counts them.
    private let spare: Mutex<[Buffer]>
    private let available: DispatchSemaphore
    private let failure = Mutex<(any Error)?>(nil)
    private let descriptor: Int32
    private let path: String
    /// Whether writes still go around the page cache; touched on the queue only.
    private var direct: Bool
    /// The flag `descriptor` was opened with for direct writes (0: none).
    private let directFlag: Int32

    /// Writes to `descriptor` (named `path` in errors) through `depth` buffers of `capacity` bytes.
    /// - Parameter directFlag: the `O_DIRECT` flag `descriptor` was opened with, 0 when it was not (the caller's
    ///   `open` decides; FerryDirectIO knows the platform's value).
    init(descriptor: Int32, path: String, depth: Int, capacity: Int, directFlag: Int32) {
        self.descriptor = descriptor
        self.path = path
        self.direct = directFlag != 0
        self.directFlag = directFlag
        let size = max(Self.alignment, (capacity + Self.alignment - 1) / Self.alignment * Self.alignment)
        let buffers = (0..<max(2, depth)).map { _ in Buffer(capacity: size) }
        spare = Mutex(buffers)
        available = DispatchSemaphore.counting(buffers.count)
    }

    /// An empty buffer to fill, waiting while every buffer is in flight.
    /// - Throws: ``CoreError`` from an earlier write that failed.
    func take() throws -> Buffer {
        try check()
        available.wait()
        guard let buffer = spare.withLock({ $0.popLast() }) else { preconditionFailure("a buffer counted as spare is missing") }
        buffer.count = 0
        return buffer
    }

    /// Hands a filled buffer over to be written after those handed over before.
    /// - Throws: ``CoreError`` from an earlier write that failed (the buffer is then dropped).
    func submit(_ buffer: Buffer) throws {
        do {
            try check()
        } catch {
            giveBack(buffer)
            throw error
        }
        queue.async { [self] in
            defer { giveBack(buffer) }
            guard failure.withLock({ $0 == nil }) else { return }
            do {
                try write(buffer)
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
    }

    /// Waits until every buffer handed over is written.
    /// - Throws: ``CoreError`` when one of them could not be.
    func drain() throws {
        queue.sync {}
        try check()
    }

    /// Waits for the writes in flight, for a file that is being abandoned; their errors no longer matter.
    func abandon() {
        failure.withLock { $0 = $0 ?? CoreError(.writeFailed, "\(path): abandoned") }
        queue.sync {}
    }

    private func giveBack(_ buffer: Buffer) {
        spare.withLock { $0.append(buffer) }
        available.signal()
    }

    private func check() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Writes a buffer, directly while the file's size stays aligned.
    private func write(_ buffer: Buffer) throws {
        var bytes = UnsafeRawBufferPointer(rebasing: buffer.memory[..<buffer.count])
        if direct && buffer.count % Self.alignment != 0 { stopDirectWrites() }
        if direct {
            let (written, error) = OutputFile.writeAll(bytes, to: descriptor)
            if error == 0 { return }
            guard error == EINVAL else { throw SystemError(errno: error).coreError("write", path: path, writing: true) }
            // Refused as a direct write: the rest through the page cache.
            stopDirectWrites()
            bytes = UnsafeRawBufferPointer(rebasing: bytes[written...])
        }
        let (_, error) = OutputFile.writeAll(bytes, to: descriptor)
        if error != 0 { throw SystemError(errno: error).coreError("write", path: path, writing: true) }
    }

    private func stopDirectWrites() {
        direct = false
        Self.clearFlag(directFlag, of: descriptor)
    }

    /// Makes a descriptor's later writes go through the page cache.
    package static func clearFlag(_ flag: Int32, of descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~flag) }
    }
}
