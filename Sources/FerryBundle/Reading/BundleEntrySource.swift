import FerryCore
import Foundation

/// Where a bundle's entries come from: an archive file or an extracted bag directory.
protocol BundleEntrySource: AnyObject {
    /// The next entry, or `nil` at the end.
    func nextEntry() throws -> BundleEntryHeader?
    /// Reads bytes of the current entry; 0 at its end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Skips the rest of the current entry.
    func skip() throws
}

extension ArchiveReader: BundleEntrySource {}

/// Presents an extracted bag directory as a stream of entries, in sorted path order, without following links.
final class DirectoryEntrySource: BundleEntrySource {
    private let root: String
    private let baseName: String
    private var pending: [String]
    private var current: InputFile?

    /// Lists a directory tree.
    init(root: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BundleError(.readFailed, "\(root): no such directory", cause: nil)
        }
        self.root = root
        baseName = URL(fileURLWithPath: root).lastPathComponent
        guard let enumerator = FileManager.default.enumerator(atPath: root) else {
            throw BundleError(.readFailed, "\(root): cannot list the directory")
        }
        var paths: [String] = []
        while let next = enumerator.nextObject() as? String { paths.append(next) }
        pending = paths.sorted().reversed()
    }

    func nextEntry() throws -> BundleEntryHeader? {
        current = nil
        guard let relative = pending.popLast() else { return nil }
        let full = "\(root)/\(relative)"
        var info = stat()
        guard lstat(full, &info) == 0 else { throw SystemError.current.coreError("stat", path: full) }
        let type: BundleEntryHeader.EntryType
        switch info.st_mode & S_IFMT {
        case S_IFREG: type = .file
        case S_IFDIR: type = .directory
        case S_IFLNK: type = .symbolicLink
        default: type = .other
        }
        if type == .file { current = try InputFile(path: full) }
        return BundleEntryHeader(path: "\(baseName)/\(relative)", type: type, declaredSize: Int64(info.st_size))
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let current else { return 0 }
        return try current.read(into: buffer)
    }

    func skip() throws { current = nil }
}
