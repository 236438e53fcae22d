import CArchive
import FerryCore
import Foundation

/// Writes a tar (pax) or zip archive through libarchive into an ``OutputFile``, one entry at a time.
///
/// Output is deterministic: every entry gets the same fixed mtime, owner 0:0, mode 0644 (0755 for directories), and
/// gzip writes no timestamp. The caller streams each entry's bytes in order; nothing is held in memory.
final class ArchiveWriter {
    private let handle: OpaquePointer
    private let sink: ArchiveSink
    private var isOpen = true
    private let mtime: Int64

    /// Starts an archive.
    /// - Parameters:
    ///   - file: the output; the writer flushes into it but does not close it.
    ///   - format: container and compression.
    ///   - mtime: the modification time given to every entry (seconds since 1970).
    ///   - zstdThreads: worker threads for Zstandard compression (0: compress on the calling thread).
    init(file: OutputFile, format: ArchiveFormat, mtime: Int64, zstdThreads: Int = 0) throws {
        ArchiveLocale.ensureUTF8()
        guard let handle = archive_write_new() else { throw BundleError(.writeFailed, "libarchive could not allocate a writer") }
        self.handle = handle
        self.mtime = mtime
        sink = ArchiveSink(file: file)
        do {
            switch format {
            case .tarGzip:
                try check(archive_write_set_format_pax_restricted(handle), "set tar format")
                try check(archive_write_add_filter_gzip(handle), "add gzip")
                try check(archive_write_set_options(handle, "gzip:!timestamp"), "set gzip options")
            case .tarZstd:
                try check(archive_write_set_format_pax_restricted(handle), "set tar format")
                try check(archive_write_add_filter_zstd(handle), "add zstd")
                if zstdThreads > 0 {
                    try check(archive_write_set_filter_option(handle, "zstd", "threads", "\(zstdThreads)"), "set zstd threads")
                }
            case .zip:
                try check(archive_write_set_format_zip(handle), "set zip format")
                try check(archive_write_set_options(handle, "zip:compression=deflate"), "set zip options")
            }
            // No padding to 10 KiB tape blocks beyond what the format needs.
            try check(archive_write_set_bytes_in_last_block(handle, 1), "set block padding")
            let context = Unmanaged.passUnretained(sink).toOpaque()
            try check(archive_write_open2(handle, context, nil, archiveWriteCallback, nil, nil), "open output")
        } catch {
            archive_write_free(handle)
            throw error
        }
    }

    deinit {
        if isOpen { archive_write_free(handle) }
    }

    /// Starts a regular file entry of `size` bytes; write exactly that many bytes next.
    func beginFile(_ path: String, size: Int64) throws {
        try writeHeader(path, type: CArchive_AE_IFREG, permissions: 0o644, size: size)
    }

    /// Writes a directory entry.
    func directory(_ path: String) throws {
        try writeHeader(path.hasSuffix("/") ? path : path + "/", type: CArchive_AE_IFDIR, permissions: 0o755, size: 0)
    }

    /// Writes bytes of the current entry.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let written = archive_write_data(handle, base, bytes.count)
        guard written == bytes.count else { throw failure("write entry data") }
    }

    /// Writes a whole small file entry.
    func file(_ path: String, contents: [UInt8]) throws {
        try beginFile(path, size: Int64(contents.count))
        try contents.withUnsafeBytes { try write($0) }
    }

    /// Finishes the archive: flushes the compressor and the trailer into the output file.
    func close() throws {
        guard isOpen else { return }
        isOpen = false
        let status = archive_write_close(handle)
        defer { archive_write_free(handle) }
        if let error = sink.error { throw error }
        guard status == ARCHIVE_OK else { throw BundleError(.writeFailed, "finishing the archive failed: \(ArchiveStatus.message(handle))") }
    }

    private func writeHeader(_ path: String, type: UInt32, permissions: UInt32, size: Int64) throws {
        guard let entry = archive_entry_new() else { throw BundleError(.writeFailed, "libarchive could not allocate an entry") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname_utf8(entry, path)
        archive_entry_set_filetype(entry, type)
        archive_entry_set_perm(entry, mode_t(permissions))
        archive_entry_set_size(entry, size)
        archive_entry_set_mtime(entry, time_t(mtime), 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        let status = archive_write_header(handle, entry)
        guard status >= ARCHIVE_WARN else { throw failure("write the header of \(path)") }
    }

    private func check(_ status: Int32, _ action: String) throws {
        guard status >= ARCHIVE_WARN else { throw failure(action) }
    }

    private func failure(_ action: String) -> any Error {
        if let error = sink.error { return error }
        return BundleError(.writeFailed, "libarchive could not \(action): \(ArchiveStatus.message(handle))")
    }
}

/// Where libarchive's compressed output goes; keeps the first write error for the writer to rethrow.
private final class ArchiveSink {
    let file: OutputFile
    var error: (any Error)?

    init(file: OutputFile) { self.file = file }

    func receive(_ buffer: UnsafeRawPointer?, _ length: Int) -> la_ssize_t {
        guard error == nil else { return -1 }
        guard let buffer, length > 0 else { return 0 }
        do {
            try file.write(UnsafeRawBufferPointer(start: buffer, count: length))
            return la_ssize_t(length)
        } catch {
            self.error = error
            return -1
        }
    }
}

/// libarchive's write callback: forwards compressed bytes to the ``ArchiveSink``.
private func archiveWriteCallback(
    _ archive: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ buffer: UnsafeRawPointer?, _ length: Int
) -> la_ssize_t {
    guard let context else { return -1 }
    return Unmanaged<ArchiveSink>.fromOpaque(context).takeUnretainedValue().receive(buffer, length)
}
