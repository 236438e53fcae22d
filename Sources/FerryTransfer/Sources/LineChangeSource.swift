import FerryBackend

/// A source that can hand its changes over as lines of CloudKit record JSON, for a target that takes lines (a bundle)
/// without records in between.
public protocol LineChangeSource: ChangeSource {
    /// Whether this source reads lines (``forEachLinePage(_:)``): a wrapper reads them only when what it wraps does.
    var readsLines: Bool { get }
    /// Calls `body` with every change, in the order ``ChangeSource/forEachChange(_:)`` gives them, a page of lines at a
    /// time.
    func forEachLinePage(_ body: (ChangeLines) throws -> Void) throws
}

/// A page of a source's changes as lines, with where they came from.
public struct ChangeLines: Sendable {
    /// The lines and deletions.
    public var page: LinePage
    /// Where they came from, for messages and reject files (a store and zone).
    public var origin: String

    /// Creates a page of lines from `origin`.
    public init(_ page: LinePage, origin: String) {
        self.page = page
        self.origin = origin
    }
}
