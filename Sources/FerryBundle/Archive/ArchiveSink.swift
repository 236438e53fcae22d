import CArchive

/// Where a libarchive writer's output goes; keeps the first write error for the writer to rethrow.
final class ArchiveSink {
    private let output: (UnsafeRawBufferPointer) throws -> Void
    /// The first error of the output; once set, every later write is refused.
    var error: (any Error)?
    /// Bytes still to be dropped rather than passed on: those of an entry whose content reached the output another way
    /// (``ArchiveWriter/appendCompressed(size:_:)``).
    var dropping: Int64 = 0

    /// A sink that hands each buffer libarchive writes to `output`.
    init(output: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.output = output }

    func receive(_ buffer: UnsafeRawPointer?, _ length: Int) -> la_ssize_t {
        guard error == nil else { return -1 }
        guard let buffer, length > 0 else { return 0 }
        let dropped = Int(min(Int64(length), dropping))
        dropping -= Int64(dropped)
        guard dropped < length else { return la_ssize_t(length) }
        do {
            try output(UnsafeRawBufferPointer(start: buffer + dropped, count: length - dropped))
            return la_ssize_t(length)
        } catch {
            self.error = error
            return -1
        }
    }
}

extension ArchiveSink {
    /// Opens a libarchive writer so that everything it writes reaches this sink, with no padding to 10 KiB tape blocks
    /// beyond what the format needs.
    func open(_ handle: OpaquePointer) throws {
        try check(archive_write_set_bytes_in_last_block(handle, 1), "set block padding", handle)
        try check(archive_write_set_bytes_per_block(handle, 0), "set unbuffered output", handle)
        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(archive_write_open2(handle, context, nil, archiveWriteCallback, nil, nil), "open the output", handle)
    }

    /// Throws ``failure(_:_:)`` unless `status` is success or a warning.
    func check(_ status: Int32, _ action: String, _ handle: OpaquePointer) throws {
        guard status >= ARCHIVE_WARN else { throw failure(action, handle) }
    }

    /// What to report when a call on a writer into this sink failed: the output's own error if it failed, else
    /// libarchive's message.
    func failure(_ action: String, _ handle: OpaquePointer) -> any Error {
        error ?? BundleError(.writeFailed, "libarchive could not \(action): \(ArchiveStatus.message(handle))")
    }
}

/// libarchive's write callback: forwards the writer's bytes to the ``ArchiveSink`` it was opened with.
func archiveWriteCallback(
    _ archive: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ buffer: UnsafeRawPointer?, _ length: Int
) -> la_ssize_t {
    guard let context else { return -1 }
    return Unmanaged<ArchiveSink>.fromOpaque(context).takeUnretainedValue().receive(buffer, length)
}
