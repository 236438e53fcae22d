import FerryCore
import GRDB
import GRDBSQLite

extension LocalStoreBatch {
    /// Reads a record's state (without its body); every record a copy writes is looked up first, most often in vain.
    func fetchState(zone: Int64, name: String) throws -> StoredRecord? {
        let statement = try statement(
            \.state, sql: "SELECT type, tag, deleted, digest, created, modified FROM records WHERE zone = ? AND name = ?")
        return try step(statement) { handle in
            let code = sqlite3_bind_int64(handle, 1, zone)
            return code == SQLITE_OK ? Self.bind(handle, 2, text: name) : code
        } read: { handle, hasRow in
            guard hasRow else { return nil }
            let digest: SHA256Digest? =
                sqlite3_column_type(handle, 3) == SQLITE_NULL
                ? nil
                : sqlite3_column_blob(handle, 3).flatMap { blob in
                    SHA256Digest(bytes: UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, 3))))
                }
            return StoredRecord(
                recordType: Self.text(handle, 0), changeTag: Self.text(handle, 1), isDeleted: sqlite3_column_int64(handle, 2) != 0,
                contentDigest: digest, created: sqlite3_column_int64(handle, 4), modified: sqlite3_column_int64(handle, 5))
        }
    }
}
