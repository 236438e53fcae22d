import FerryCore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BundleReader {
    /// Extracts the bundle into a new directory that becomes the bag's base directory, after checking everything.
    ///
    /// Files are written under a temporary name beside `directory`, which is renamed into place only when every
    /// entry passed its checks; on any problem nothing is left behind. Only regular files and directories are ever
    /// created, at paths checked to stay inside the target.
    /// - Throws: ``BundleError/Code/targetExists`` if `directory` exists; any verification error.
    public func extract(to directory: String, progress: ((Int64) -> Void)? = nil) throws {
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw BundleError(.targetExists, "\(directory) already exists; choose a new directory to extract into")
        }
        let parent = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        let staging = try TemporaryDirectory(prefix: ".\(URL(fileURLWithPath: directory).lastPathComponent).partial", parent: parent)
        let extractor = Extractor(root: staging.path)
        try scan(extractor, complete: true, progress: progress)
        guard rename(staging.path, directory) == 0 else {
            throw BundleError(.writeFailed, "could not move the extracted bundle to \(directory): \(SystemError.current)")
        }
        staging.forget()
    }
}

/// Writes every entry under a staging directory; any issue stops the extraction.
private final class Extractor: BundleVisitor {
    let root: String
    private var current: OutputFile?
    private var madeDirectories: Set<String> = []

    init(root: String) { self.root = root }

    func wants(_ entry: BundleEntry) -> Bool { true }

    func begin(_ entry: BundleEntry) throws {
        // The path was normalised and checked by the scan: relative, no "..", no empty or "." components.
        let components = entry.path.split(separator: "/")
        var directory = root
        for component in components.dropLast() {
            directory += "/\(component)"
            if madeDirectories.insert(directory).inserted {
                guard mkdir(directory, 0o755) == 0 || errno == EEXIST else {
                    throw SystemError.current.coreError("mkdir", path: directory, writing: true)
                }
            }
        }
        current = try OutputFile(path: "\(root)/\(entry.path)", exclusive: true)
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws { try current?.write(bytes) }

    func end(_ entry: BundleEntry, intact: Bool) throws {
        try current?.close()
        current = nil
    }

    func issue(_ error: BundleError) throws { throw error }
}
