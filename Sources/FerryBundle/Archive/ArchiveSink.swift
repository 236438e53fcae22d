import CArchive

/// Where a libarchive writer's output goes; keeps the first write error for the writer to rethrow.
final class ArchiveSink {
    private let output: (UnsafeRawBufferPointer) throws -> Void
    /// The first error of the output; once set, every later write is refused.
    var error: (any Error)?

    /// A sink that hands each buffer libarchive writes to `output`.
    init(output: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.output = output }

    func receive(_ buffer: UnsafeRawPointer?, _ length: Int) -> la_ssize_t {
        guard error == nil else { return -1 }
        guard let buffer, length > 0 else { return 0 }
        do {
            try output(UnsafeRawBufferPointer(start: buffer, count: length))
            return la_ssize_t(length)
        } catch {
            self.error = error
            return -1
        }
    }
}

/// libarchive's write callback: forwards the writer's bytes to the ``ArchiveSink`` it was opened with.
func archiveWriteCallback(
    _ archive: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ buffer: UnsafeRawPointer?, _ length: Int
) -> la_ssize_t {
    guard let context else { return -1 }
    return Unmanaged<ArchiveSink>.fromOpaque(context).takeUnretainedValue().receive(buffer, length)
}
