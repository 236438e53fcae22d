import CArchive
import FerryCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a tar or zip archive through libarchive, one entry at a time, without extracting anything.
///
/// Only the formats and filters Ferry writes are enabled (tar, zip; gzip, zstd, none), which keeps libarchive's
/// attack surface small. Every error names the archive.
final class ArchiveReader {
    private let handle: OpaquePointer
    private let path: String
    private var isOpen = true

    /// Opens an archive file.
    init(path: String) throws {
        ArchiveLocale.ensureUTF8()
        guard let handle = archive_read_new() else { throw BundleError(.readFailed, "libarchive could not allocate a reader") }
        self.handle = handle
        self.path = path
        archive_read_support_format_tar(handle)
        // The seekable zip reader works from the central directory, so a zip cut short is refused (the streaming
        // reader would accept it as long as the entries themselves are whole).
        archive_read_support_format_zip_seekable(handle)
        archive_read_support_filter_gzip(handle)
        archive_read_support_filter_zstd(handle)
        archive_read_support_filter_none(handle)
        let status = archive_read_open_filename(handle, path, 1 << 16)
        guard status == ARCHIVE_OK else {
            let message = ArchiveStatus.message(handle)
            archive_read_free(handle)
            isOpen = false
            if let error = Self.fileError(path) { throw error }
            if let other = Self.otherCompression(path) {
                throw BundleError(
                    .notABundle,
                    "\(path): compressed with \(other.name), which Ferry does not read; bundles are .tar.gz, .tar.zst, .zip or a plain .tar (decompress it first: \(other.command) \(path))"
                )
            }
            throw BundleError(.notABundle, "\(path): not a tar or zip archive, or it is truncated (\(message))")
        }
    }

    deinit {
        if isOpen { archive_read_free(handle) }
    }

    /// The next entry's header, or `nil` at the end of the archive.
    func nextEntry() throws -> BundleEntryHeader? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF { return nil }
        guard status >= ARCHIVE_WARN, let entry else {
            throw BundleError(.corruptArchive, "\(path): \(ArchiveStatus.message(handle)); the archive is damaged or truncated")
        }
        let name: String
        if let utf8 = archive_entry_pathname_utf8(entry) {
            name = String(cString: utf8)
        } else if let raw = archive_entry_pathname(entry) {
            name = String(decoding: UnsafeBufferPointer(start: raw, count: strlen(raw)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else {
            throw BundleError(.unsafeEntry, "\(path): an entry has no name")
        }
        let type: BundleEntryHeader.EntryType
        if archive_entry_hardlink(entry) != nil {
            type = .hardLink
        } else {
            switch UInt32(archive_entry_filetype(entry)) & CArchive_AE_IFMT {
            case CArchive_AE_IFREG: type = .file
            case CArchive_AE_IFDIR: type = .directory
            case CArchive_AE_IFLNK: type = .symbolicLink
            default: type = .other
            }
        }
        let size: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        return BundleEntryHeader(path: name, type: type, declaredSize: size)
    }

    /// Reads bytes of the current entry; 0 at its end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let count = archive_read_data(handle, base, buffer.count)
        guard count >= 0 else {
            throw BundleError(.corruptArchive, "\(path): \(ArchiveStatus.message(handle)); the archive is damaged or truncated")
        }
        return count
    }

    /// Skips the rest of the current entry.
    func skip() throws {
        guard archive_read_data_skip(handle) >= ARCHIVE_WARN else {
            throw BundleError(.corruptArchive, "\(path): \(ArchiveStatus.message(handle)); the archive is damaged or truncated")
        }
    }

    /// The compression the file starts with when it is one other archivers use that Ferry leaves disabled, with the
    /// command that undoes it: named in the error, so that a bundle repacked with `tar -cJf` is not called "not an
    /// archive".
    private static func otherCompression(_ path: String) -> (name: String, command: String)? {
        switch (try? InputFile(path: path).readPrefix(MagicNumber.prefixLength)).flatMap(MagicNumber.recognize) {
        case .xz?: ("xz", "xz -dk")
        case .bzip2?: ("bzip2", "bzip2 -dk")
        case .lz4?: ("lz4", "lz4 -d")
        case .sevenZip?: ("7-Zip", "7z x")
        default: nil
        }
    }

    private static func fileError(_ path: String) -> (any Error)? {
        do {
            _ = try InputFile(path: path)
            return nil
        } catch {
            return error
        }
    }
}
