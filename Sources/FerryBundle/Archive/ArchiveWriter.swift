import CArchive
import FerryCore
import Foundation

/// Writes a tar (pax) or zip archive through libarchive into an ``OutputFile``, one entry at a time.
///
/// Output is deterministic: every entry gets the same fixed mtime, owner 0:0, mode 0644 (0755 for directories), and
/// gzip writes no timestamp. The caller streams each entry's bytes in order; nothing is held in memory. A tar
/// archive's compression runs beside the caller (``StreamCompressor``): gzip on a thread of its own
/// (``GzipCompressor``), Zstandard on its own worker threads (``ZstdCompressor``).
final class ArchiveWriter {
    private let handle: OpaquePointer
    private let sink: ArchiveSink
    /// A tar archive's compressor; `nil` for zip, which compresses inside the format.
    private let compressor: (any StreamCompressor)?
    private var isOpen = true
    private let mtime: Int64

    /// Starts an archive.
    /// - Parameters:
    ///   - file: the output; the writer flushes into it but does not close it.
    ///   - format: container and compression.
    ///   - mtime: the modification time given to every entry (seconds since 1970).
    ///   - zstdWorkers: Zstandard's worker threads (at least 1; the bytes do not depend on the count).
    convenience init(file: OutputFile, format: ArchiveFormat, mtime: Int64, zstdWorkers: Int = 2) throws {
        ArchiveLocale.ensureUTF8()
        let compressor: (any StreamCompressor)? =
            switch format {
            case .tarGzip: try GzipCompressor(file: file)
            case .tarZstd: try ZstdCompressor(file: file, workers: zstdWorkers)
            case .zip: nil
            }
        let sink = compressor.map { compressor in ArchiveSink { try compressor.write($0) } } ?? ArchiveSink { try file.write($0) }
        try self.init(sink: sink, compressor: compressor, zip: format == .zip, mtime: mtime)
    }

    /// Starts an uncompressed tar (pax) archive whose bytes go to `output` as libarchive makes them.
    convenience init(tarInto output: @escaping (UnsafeRawBufferPointer) throws -> Void, mtime: Int64) throws {
        ArchiveLocale.ensureUTF8()
        try self.init(sink: ArchiveSink(output: output), compressor: nil, zip: false, mtime: mtime)
    }

    private init(sink: ArchiveSink, compressor: (any StreamCompressor)?, zip: Bool, mtime: Int64) throws {
        self.compressor = compressor
        self.sink = sink
        guard let handle = archive_write_new() else {
            compressor?.abandon()
            throw BundleError(.writeFailed, "libarchive could not allocate a writer")
        }
        self.handle = handle
        self.mtime = mtime
        do {
            if zip {
                try check(archive_write_set_format_zip(handle), "set zip format")
                try check(archive_write_set_options(handle, "zip:compression=deflate"), "set zip options")
            } else {
                try check(archive_write_set_format_pax_restricted(handle), "set tar format")
            }
            try sink.open(handle)
        } catch {
            archive_write_free(handle)
            compressor?.abandon()
            throw error
        }
    }

    deinit {
        if isOpen {
            // Abandoned: freeing flushes the writer, and nothing more may reach the output.
            sink.error = sink.error ?? BundleError(.writeFailed, "the archive was abandoned")
            archive_write_free(handle)
        }
        compressor?.abandon()
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

    /// Whether ``appendCompressed(size:_:)`` may be used: the archive goes into a Zstandard stream.
    var takesCompressedContent: Bool { compressor is ZstdCompressor }

    /// Writes the next `size` bytes of the current entry's content as complete Zstandard frames made elsewhere, which
    /// `frames` hands over piece by piece: they go into the output as they are, so they are not compressed twice.
    ///
    /// The frames must hold exactly those `size` bytes: the stream is read back as the frames' bytes in place of the
    /// content (``skipContent(size:)``).
    /// - Throws: ``BundleError`` when the archive is not a .tar.zst, or what `frames` throws.
    func appendCompressed(size: Int64, _ frames: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard let zstd = compressor as? ZstdCompressor else {
            throw BundleError(.writeFailed, "only a .tar.zst archive takes compressed content as it is")
        }
        try frames { try zstd.appendFrames($0) }
        try skipContent(size: size)
    }

    /// Counts the next `size` bytes of the current entry's content as written, writing nothing: for content that
    /// reaches the output another way (``appendCompressed(size:_:)``, ``TarEntryFraming``).
    ///
    /// libarchive, which counts each entry's bytes, is given as many zeros, and the sink drops them.
    func skipContent(size: Int64) throws {
        sink.dropping += size
        var left = size
        while left > 0 {
            let count = Int(min(left, Int64(Self.zeros.count)))
            try write(UnsafeRawBufferPointer(rebasing: Self.zeros[..<count]))
            left -= Int64(count)
        }
        // libarchive passes its caller's bytes straight on (no blocking: ``ArchiveSink/open(_:)``), so all are dropped.
        guard sink.dropping == 0 else { throw BundleError(.writeFailed, "libarchive held back \(sink.dropping) bytes of an entry") }
    }

    /// Ends the current entry: writes the zeros that pad its content to the format's block.
    func finishEntry() throws {
        try check(archive_write_finish_entry(handle), "finish an entry")
    }

    /// Ends the current entry and, in a .tar.zst, the Zstandard frame, and writes everything so far into the output:
    /// the archive can then go on in another file (``redirect(to:)``).
    func endSegment() throws {
        try finishEntry()
        if let error = sink.error { throw error }
        try (compressor as? ZstdCompressor)?.endFrame()
    }

    /// Sends what a .tar.zst archive writes from now on to `file` (after ``endSegment()``).
    func redirect(to file: OutputFile) throws {
        guard let zstd = compressor as? ZstdCompressor else {
            throw BundleError(.writeFailed, "only a .tar.zst archive can go on in another file")
        }
        zstd.redirect(to: file)
    }

    /// Zeros for ``skipContent(size:)``, never written to.
    nonisolated(unsafe) private static let zeros: UnsafeRawBufferPointer = {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return UnsafeRawBufferPointer(buffer)
    }()

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
        if let error = sink.error {
            compressor?.abandon()
            throw error
        }
        guard status == ARCHIVE_OK else {
            compressor?.abandon()
            throw BundleError(.writeFailed, "finishing the archive failed: \(ArchiveStatus.message(handle))")
        }
        try compressor?.close()
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

    private func check(_ status: Int32, _ action: String) throws { try sink.check(status, action, handle) }

    private func failure(_ action: String) -> any Error { sink.failure(action, handle) }
}
