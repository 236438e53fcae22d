/// The signatures of a few files (absent ones included), to tell afterwards whether any of them was written.
///
/// ```swift
/// let before = FileSnapshot(paths: [store, store + "-wal"])
/// … read the store in place …
/// if let changed = before.changedFile() { /* the reading may be inconsistent: run again */ }
/// ```
public struct FileSnapshot: Sendable, Hashable {
    /// Each path with its signature then (`nil`: no file).
    public let signatures: [String: FileSignature?]

    /// Takes the signatures of `paths` now.
    public init(paths: [String]) {
        var signatures: [String: FileSignature?] = [:]
        for path in paths { signatures[path] = FileSignature(path: path) }
        self.signatures = signatures
    }

    /// The first path (in sorted order) whose file was written, replaced, made or removed since; `nil` if none.
    public func changedFile() -> String? {
        signatures.keys.sorted().first { FileSignature(path: $0) != signatures[$0] ?? nil }
    }
}
