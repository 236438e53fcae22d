import FerryCore
import FerryJSON
import Foundation

/// The `sqlite3` command-line shell, used by tests to read stores independently of Ferry's own SQLite code.
public enum SQLiteShell {
    /// An error from the shell.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs a query with `-json` output and returns the rows (an empty result is `[]`).
    /// - Parameters:
    ///   - database: the database file; tests pass a copy, never a fixture in place.
    ///   - sql: the query.
    public static func rows(_ database: String, _ sql: String) throws -> [JSONObject] {
        let result = try ProcessResult.run("/usr/bin/env", ["sqlite3", "-json", database, sql])
        guard result.status == 0 else { throw Failure(description: "sqlite3 failed (\(result.status)): \(result.errors)") }
        if result.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return [] }
        guard let rows = try JSONParser.parse(result.output).arrayValue else { throw Failure(description: "sqlite3 did not print a JSON array") }
        return rows.compactMap(\.objectValue)
    }

    /// Runs a statement (or several) with no output wanted.
    public static func execute(_ database: String, _ sql: String) throws {
        let result = try ProcessResult.run("/usr/bin/env", ["sqlite3", database, sql])
        guard result.status == 0 else { throw Failure(description: "sqlite3 failed (\(result.status)): \(result.errors)") }
    }

    /// Whether the shell is installed (`Scripts/test` installs it).
    public static var isAvailable: Bool {
        (try? ProcessResult.run("/usr/bin/env", ["sqlite3", "-version"]).status) == 0
    }
}

/// The SHA-256 of every file under a directory (or of one file), to prove a reader changed nothing.
public struct DirectoryFingerprint: Equatable, CustomStringConvertible {
    /// Relative path → digest, including hidden files and folders such as `.Store_SUPPORT`.
    public var digests: [String: SHA256Digest]

    /// Fingerprints a directory tree or a single file.
    public init(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SQLiteShell.Failure(description: "\(path) does not exist")
        }
        if !isDirectory.boolValue {
            digests = [URL(fileURLWithPath: path).lastPathComponent: SHA256Hasher.digest(try InputFile.contents(of: path, limit: 1 << 32))]
            return
        }
        var digests: [String: SHA256Digest] = [:]
        let names = FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []
        for name in names {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: "\(path)/\(name)", isDirectory: &isFolder)
            if isFolder.boolValue { continue }
            digests[name] = SHA256Hasher.digest(try InputFile.contents(of: "\(path)/\(name)", limit: 1 << 32))
        }
        self.digests = digests
    }

    public var description: String { digests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.hex.prefix(12))" }.joined(separator: "\n") }
}
