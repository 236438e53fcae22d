import CArchive
import FerryCore
import Foundation

/// Writes tar archives with arbitrary entries — including the hostile ones Ferry must refuse (links, devices,
/// `..`, absolute paths, duplicates) — for tests.
public final class TarBuilder {
    /// An entry's kind.
    public enum Kind {
        case file(Data)
        case directory
        case symlink(target: String)
        case hardlink(target: String)
        case characterDevice
        /// A file whose header declares `declared` bytes; the data is `data` padded by libarchive as needed.
        case fileDeclaring(declared: Int64, data: Data)
    }

    private var entries: [(path: String, kind: Kind)] = []

    /// Starts an empty archive.
    public init() {}

    /// Adds an entry.
    @discardableResult
    public func add(_ path: String, _ kind: Kind) -> TarBuilder {
        entries.append((path, kind))
        return self
    }

    /// Adds every file under a directory (sorted, so the result is deterministic), with `prefix/` before each path.
    @discardableResult
    public func addTree(_ root: String, prefix: String, order: (String, String) -> Bool = { $0 < $1 }) throws -> TarBuilder {
        let names = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).sorted(by: order)
        for name in names {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: "\(root)/\(name)", isDirectory: &isDirectory)
            if isDirectory.boolValue { continue }
            add("\(prefix)/\(name)", .file(try Data(contentsOf: URL(fileURLWithPath: "\(root)/\(name)"))))
        }
        return self
    }

    /// Writes the archive, gzip-compressed when `gzip` is set.
    public func write(to path: String, gzip: Bool = true) throws {
        _ = setlocale(LC_CTYPE, "C.UTF-8")
        guard let archive = archive_write_new() else { throw CoreError(.writeFailed, "archive_write_new failed") }
        defer { archive_write_free(archive) }
        archive_write_set_format_pax_restricted(archive)
        if gzip { archive_write_add_filter_gzip(archive) }
        guard archive_write_open_filename(archive, path) == ARCHIVE_OK else {
            throw CoreError(.writeFailed, "cannot open \(path)")
        }
        for (name, kind) in entries {
            guard let entry = archive_entry_new() else { continue }
            defer { archive_entry_free(entry) }
            archive_entry_set_pathname(entry, name)
            archive_entry_set_perm(entry, 0o644)
            archive_entry_set_mtime(entry, 1_700_000_000, 0)
            var body = Data()
            switch kind {
            case .file(let data):
                archive_entry_set_filetype(entry, CArchive_AE_IFREG)
                archive_entry_set_size(entry, Int64(data.count))
                body = data
            case .fileDeclaring(let declared, let data):
                archive_entry_set_filetype(entry, CArchive_AE_IFREG)
                archive_entry_set_size(entry, declared)
                body = data
            case .directory:
                archive_entry_set_filetype(entry, CArchive_AE_IFDIR)
            case .symlink(let target):
                archive_entry_set_filetype(entry, CArchive_AE_IFLNK)
                archive_entry_set_symlink(entry, target)
            case .hardlink(let target):
                archive_entry_set_filetype(entry, CArchive_AE_IFREG)
                archive_entry_set_hardlink(entry, target)
            case .characterDevice:
                archive_entry_set_filetype(entry, 0o020000)
                archive_entry_set_rdev(entry, 0x0103)
            }
            guard archive_write_header(archive, entry) >= ARCHIVE_WARN else {
                throw CoreError(.writeFailed, "header for \(name): \(String(cString: archive_error_string(archive)))")
            }
            if !body.isEmpty {
                _ = body.withUnsafeBytes { archive_write_data(archive, $0.baseAddress, $0.count) }
            }
        }
        guard archive_write_close(archive) == ARCHIVE_OK else { throw CoreError(.writeFailed, "closing \(path) failed") }
    }
}
