import FerryCore
import GRDB
import GRDBSQLite

extension LocalStoreBatch {
    /// Reads a record's state (without its body) through the cached statement's SQLite handle.
    ///
    /// Every record a copy writes is looked up first, most often in vain; GRDB's `Row.fetchOne` builds a cursor, a
    /// row and a column-name table each time, which cost more than SQLite's own index search. The statement stays
    /// GRDB's (cached, prepared once); only stepping and reading columns are done here, and it is reset after use.
    func fetchState(zone: Int64, name: String) throws -> StoredRecord? {
        let statement = try db.cachedStatement(
            sql: "SELECT type, tag, deleted, digest, created, modified FROM records WHERE zone = ? AND name = ?")
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var code = sqlite3_bind_int64(handle, 1, zone)
        if code == SQLITE_OK { code = Self.bind(handle, 2, text: name) }
        if code == SQLITE_OK { code = sqlite3_step(handle) }
        switch code {
        case SQLITE_DONE:
            return nil
        case SQLITE_ROW:
            let digest: SHA256Digest? =
                sqlite3_column_type(handle, 3) == SQLITE_NULL
                ? nil
                : sqlite3_column_blob(handle, 3).flatMap { blob in
                    SHA256Digest(bytes: UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, 3))))
                }
            return StoredRecord(
                recordType: Self.text(handle, 0), changeTag: Self.text(handle, 1), isDeleted: sqlite3_column_int64(handle, 2) != 0,
                contentDigest: digest, created: sqlite3_column_int64(handle, 4), modified: sqlite3_column_int64(handle, 5))
        default:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                sql: statement.sql)
        }
    }

    /// A TEXT column as a string (its bytes, not up to a NUL).
    private static func text(_ handle: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }
}
