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
    /// entry passed its checks and every record the checks `verify` makes (canonical, in the file of its type and
    /// zone, valid, unique, its assets present), in the same pass; on any problem nothing is left behind. Only regular
    /// files and directories are ever created, at paths checked to stay inside the target.
    /// - Throws: ``BundleError/Code/targetExists`` if `directory` exists; any verification error.
    public func extract(to directory: String, progress: ((Int64) -> Void)? = nil) throws {
        guard !FileManager.default.fileExists(atPath: directory) else {
            throw BundleError(.targetExists, "\(directory) already exists; choose a new directory to extract into")
        }
        let parent = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        let staging = try TemporaryDirectory(prefix: ".\(URL(fileURLWithPath: directory).lastPathComponent).partial", parent: parent)
        let extractor = Extractor(root: staging.path)
        let verifier = BundleVerifier(reader: self, checksumsOnly: false, temporaryDirectory: temporaryDirectory)
        let checked = CheckedExtraction(extractor: extractor, verifier: verifier)
        verifier.onIssue = { issue in checked.noteIssue(issue) }
        try scan(checked, complete: true, progress: progress)
        try verifier.finish()
        try checked.stopIfFailed()
        guard rename(staging.path, directory) == 0 else {
            throw BundleError(.writeFailed, "could not move the extracted bundle to \(directory): \(SystemError.current)")
        }
        staging.forget()
    }
}

/// Extraction and the record checks of `verify` in one scan: the first problem the checks report stops it.
private final class CheckedExtraction: BundleVisitor {
    let extractor: Extractor
    let verifier: BundleVerifier
    private var first: BundleError?
    private var count = 0

    init(extractor: Extractor, verifier: BundleVerifier) {
        self.extractor = extractor
        self.verifier = verifier
    }

    /// Called by the checks, on the scanning thread, for each problem.
    func noteIssue(_ issue: BundleError) {
        if first == nil { first = issue }
        count += 1
    }

    /// Throws the first problem found, saying how many there were.
    func stopIfFailed() throws {
        guard let first else { return }
        let more = count > 1 ? " (and \(count - 1) more problems found so far; ferry verify lists them all)" : ""
        throw BundleError(first.code, first.message + more + "; nothing was extracted", cause: first.cause)
    }

    func wants(_ entry: BundleEntry) -> Bool { true }

    func begin(_ entry: BundleEntry) throws {
        try stopIfFailed()
        try extractor.begin(entry)
        if verifier.wants(entry) { try verifier.begin(entry) }
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws {
        try extractor.consume(bytes)
        try verifier.consume(bytes)
        try verifier.settleIssues()
        try stopIfFailed()
    }

    func end(_ entry: BundleEntry, intact: Bool) throws {
        try extractor.end(entry, intact: intact)
        if verifier.wants(entry) { try verifier.end(entry, intact: intact) }
        try verifier.settleIssues()
        try stopIfFailed()
    }

    func issue(_ error: BundleError) throws { try extractor.issue(error) }

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
