import CSQLite

/// Process-wide SQLite settings for a program that copies in bulk.
public enum SQLiteProcessSettings {
    /// Turns off SQLite's memory statistics, which nothing in Ferry reads.
    ///
    /// They take a global mutex on every allocation and free inside SQLite, a good part of the writing thread of a
    /// large copy into a local store (Docs/design-notes.md). The setting is the whole process's,
    /// so it applies to the stores Ferry reads as well. Call once, before any database is opened; later calls, or calls
    /// after SQLite started, change nothing.
    /// - Returns: whether the setting took effect.
    @discardableResult
    public static func apply() -> Bool {
        ferry_sqlite3_disable_memory_statistics() == SQLITE_OK
    }
}
