import CArchive

/// A tar archive's compression, as a libarchive filter.
enum ArchiveCompression: Sendable {
    /// gzip without a timestamp, so that output is reproducible.
    case gzip
    /// Zstandard, with `threads` worker threads of its own (0: it compresses on the thread that writes).
    case zstd(threads: Int)

    /// Adds the filter to a writer whose output goes to `sink` (which names the failure).
    func add(to handle: OpaquePointer, _ sink: ArchiveSink) throws {
        switch self {
        case .gzip:
            try sink.check(archive_write_add_filter_gzip(handle), "add gzip", handle)
            try sink.check(archive_write_set_options(handle, "gzip:!timestamp"), "set gzip options", handle)
        case .zstd(let threads):
            try sink.check(archive_write_add_filter_zstd(handle), "add zstd", handle)
            if threads > 0 {
                try sink.check(archive_write_set_filter_option(handle, "zstd", "threads", "\(threads)"), "set zstd threads", handle)
            }
        }
    }
}
