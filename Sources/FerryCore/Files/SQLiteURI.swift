import Foundation

/// SQLite `file:` URIs for opening databases read-only without touching them.
public enum SQLiteURI {
    /// `file:<path>?immutable=1`: SQLite reads the file as it is, takes no locks and creates no `-wal` or `-shm`.
    public static func immutable(_ path: String) -> String { "file:\(escaped(path))?immutable=1" }

    /// A path escaped for a `file:` URI (`?`, `#` and `%` too).
    public static func escaped(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}
