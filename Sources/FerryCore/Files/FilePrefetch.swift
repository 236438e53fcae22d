import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Asks the system to read a file into its page cache in the background, ahead of a reader that will read most of it
/// in an order of its own (SQLite's pages of a store).
///
/// A store not read lately is mostly on disk: its reader then waits for each page it reaches, where the disk could
/// have been reading the rest meanwhile. This is only advice: a file that cannot be opened or advised is read as it
/// would be without it, and at most `limit` bytes are asked for, so that a file larger than the memory the system
/// can cache does not push out its own first pages before they are read.
package enum FilePrefetch {
    /// Starts reading `path` ahead, on a thread of its own, up to `limit` bytes (an eighth of the machine's memory by
    /// default).
    package static func start(_ path: String, limit: Int = Int(ProcessInfo.processInfo.physicalMemory / 8)) {
        #if canImport(Glibc)
            Thread.detachNewThread {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { return }
                defer { close(descriptor) }
                var status = stat()
                guard fstat(descriptor, &status) == 0 else { return }
                let size = min(Int(status.st_size), limit)
                // In pieces, so that the system starts on the first ones while the rest are asked for.
                let piece = 16 << 20
                var offset = 0
                while offset < size {
                    let length = min(piece, size - offset)
                    guard posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_WILLNEED) == 0 else { return }
                    offset += length
                }
            }
        #endif
    }
}
