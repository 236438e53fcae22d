import FerryCore
import FerryRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blobs kept for the length of a copy in one scratch file: each appended once, read back by offset.
///
/// One file rather than one per blob: removing hundreds of small files at the end of a copy was slow while the target's
/// pages were being written back; one file is one removal. The bytes were hashed
/// in memory before they were written, and nobody else writes the file, so readers need not hash them again.
final class ScratchBlobs: @unchecked Sendable {
    /// Where a blob lies in the file.
    struct Slice: Sendable {
        let offset: Int64
        let count: Int64
    }

    let path: String
    private let descriptor: Int32
    /// The end of the file: where the next blob goes (callers serialise ``append(_:)``).
    private var end: Int64 = 0

    /// Creates the file (it must not exist).
    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemError.current.coreError("open", path: path, writing: true) }
    }

    deinit { close(descriptor) }

    /// Appends `bytes`; not safe to call from two threads at once.
    func append(_ bytes: [UInt8]) throws -> Slice {
        let start = end
        try bytes.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = pwrite(descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written, off_t(start) + off_t(written))
                if count < 0 {
                    if errno == EINTR { continue }
                    throw SystemError.current.coreError("write", path: path, writing: true)
                }
                written += count
            }
        }
        end += Int64(bytes.count)
        return Slice(offset: start, count: Int64(bytes.count))
    }

    /// Reads up to `buffer.count` bytes of `slice` from `position` bytes into it; 0 at its end.
    func read(_ slice: Slice, at position: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let wanted = Int(min(Int64(buffer.count), slice.count - position))
        guard wanted > 0, let base = buffer.baseAddress else { return 0 }
        while true {
            let count = pread(descriptor, base, wanted, off_t(slice.offset + position))
            if count > 0 { return count }
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw SystemError.current.coreError("read", path: path) }
            throw CoreError(.readFailed, "\(path): ends \(slice.count - position) bytes early at offset \(slice.offset + position)")
        }
    }
}

/// One blob of a ``ScratchBlobs`` file, read from its start.
final class ScratchBlobReader: AssetReading, BufferReading {
    let isVerified = true
    private let blobs: ScratchBlobs
    private let slice: ScratchBlobs.Slice
    private var position: Int64 = 0

    init(_ blobs: ScratchBlobs, _ slice: ScratchBlobs.Slice) {
        self.blobs = blobs
        self.slice = slice
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = try blobs.read(slice, at: position, into: buffer)
        position += Int64(count)
        return count
    }

    func finish() throws {}
}
