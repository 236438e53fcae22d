import FerryCore
import GRDB
import GRDBSQLite

extension LocalStoreBatch {
    /// Writes a live record's row: inserts it, or updates the row with its zone and name (during a bulk load, which
    /// has no name index, a plain insert: the load never writes a name twice).
    func upsertRecord(
        zone: Int64, name: String, type: String, tag: String, sequence: Int64, created: Int64, digest: SHA256Digest, body: [UInt8]
    ) throws {
        let insert = "INSERT INTO records(zone, name, type, tag, seq, created, modified, deleted, digest, body) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)"
        let statement: Statement
        if let bulk = store.bulkLoad {
            statement = try self.statement(\.bulkInsert, sql: insert)
            bulk.insert(zone: zone, name: name)
        } else {
            statement = try self.statement(
                \.upsert,
                sql: insert + """

                     ON CONFLICT(zone, name) DO UPDATE SET type = excluded.type, tag = excluded.tag, seq = excluded.seq,
                        created = excluded.created, modified = excluded.modified, deleted = 0, digest = excluded.digest, body = excluded.body
                    """)
        }
        // The body is bound in place, not copied: the statement runs and is reset inside the buffer's scope (the digest
        // is copied by SQLite from the stack).
        try body.withUnsafeBytes { body in
            try execute(statement) { handle in
                var code = sqlite3_bind_int64(handle, 1, zone)
                if code == SQLITE_OK { code = Self.bind(handle, 2, text: name) }
                if code == SQLITE_OK { code = Self.bind(handle, 3, text: type) }
                if code == SQLITE_OK { code = Self.bind(handle, 4, text: tag) }
                if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 5, sequence) }
                if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 6, created) }
                if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 7, now) }
                if code == SQLITE_OK { code = digest.withUnsafeBytes { Self.bind(handle, 8, blob: $0) } }
                if code == SQLITE_OK { code = Self.bind(handle, 9, borrowedBlob: body) }
                return code
            }
        }
    }
}
