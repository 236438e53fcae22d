import FerryCore
import Foundation

/// A scratch directory for one test, removed afterwards.
public final class Scratch {
    private let directory: TemporaryDirectory

    /// Creates a directory.
    public init() throws { directory = try TemporaryDirectory(prefix: "ferry-test") }

    /// The directory's path.
    public var path: String { directory.path }

    /// A path inside it.
    public func file(_ name: String) -> String { directory.file(name) }

    /// Writes a text file (creating parent directories) and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    /// Writes bytes to a file (creating parent directories) and returns its path.
    @discardableResult
    public func write(_ name: String, _ data: Data) throws -> String {
        let path = file(name)
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Reads a file.
    public func read(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file(name))) }

    /// The names under the directory, recursively, sorted.
    public func listing() -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }
}
