import FerryCore
import FerryRecords
import Foundation
import GRDB
import GRDBSQLite

extension LocalStoreBatch {
    /// Writes a live record's row: inserts it, or updates the row with its zone and name.
    ///
    /// Every record a copy writes runs this and usually ``insertReference(zone:target:source:)``. Through GRDB each
    /// call found the cached statement by hashing its SQL, built `StatementArguments` and copied the body into `Data`:
    /// a tenth of the writer's time. The statements stay GRDB's (prepared once, cached); only binding and stepping
    /// are done here, through their SQLite handles.
    func upsertRecord(
        zone: Int64, name: String, type: String, tag: String, sequence: Int64, created: Int64, digest: SHA256Digest, body: [UInt8]
    ) throws {
        if upsertStatement == nil {
            upsertStatement = try db.cachedStatement(
                sql: """
                    INSERT INTO records(zone, name, type, tag, seq, created, modified, deleted, digest, body) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
                    ON CONFLICT(zone, name) DO UPDATE SET type = excluded.type, tag = excluded.tag, seq = excluded.seq, created = excluded.created,
                        modified = excluded.modified, deleted = 0, digest = excluded.digest, body = excluded.body
                    """)
        }
        guard let statement = upsertStatement else { return }
        let digestBytes = digest.bytes
        try execute(statement) { handle in
            var code = sqlite3_bind_int64(handle, 1, zone)
            if code == SQLITE_OK { code = Self.bind(handle, 2, text: name) }
            if code == SQLITE_OK { code = Self.bind(handle, 3, text: type) }
            if code == SQLITE_OK { code = Self.bind(handle, 4, text: tag) }
            if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 5, sequence) }
            if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 6, created) }
            if code == SQLITE_OK { code = sqlite3_bind_int64(handle, 7, now) }
            if code == SQLITE_OK { code = Self.bind(handle, 8, blob: digestBytes) }
            if code == SQLITE_OK { code = Self.bind(handle, 9, blob: body) }
            return code
        }
    }

    /// Records that `source` points at `target` with DELETE_SELF (kept if already there).
    func insertReference(zone: Int64, target: String, source: String) throws {
        if referenceStatement == nil {
            referenceStatement = try db.cachedStatement(sql: "INSERT OR IGNORE INTO refs(zone, target, source) VALUES (?, ?, ?)")
        }
        guard let statement = referenceStatement else { return }
        try execute(statement) { handle in
            var code = sqlite3_bind_int64(handle, 1, zone)
            if code == SQLITE_OK { code = Self.bind(handle, 2, text: target) }
            if code == SQLITE_OK { code = Self.bind(handle, 3, text: source) }
            return code
        }
    }

    /// Removes the row saying that `source` points at `target` with DELETE_SELF.
    func removeReference(zone: Int64, target: String, source: String) throws {
        try db.cachedStatement(sql: "DELETE FROM refs WHERE zone = ? AND target = ? AND source = ?").execute(arguments: [zone, target, source])
    }

    /// The distinct targets of a record's DELETE_SELF references, in the order they first appear: its rows in `refs`.
    static func deleteSelfTargets(of record: Record) -> [String] {
        var targets: [String] = []
        for field in record.fields {
            for reference in field.value.references where reference.action == .deleteSelf && !targets.contains(reference.recordName) {
                targets.append(reference.recordName)
            }
        }
        return targets
    }

    /// The DELETE_SELF targets of the live record stored under a name (none for a tombstone or no record), read from
    /// its stored body.
    ///
    /// `refs` has no index by source: a second random-order index on every reference a copy writes cost a fifth of a
    /// large copy into a local store, while replacing and deleting records, which need a record's own rows, are rarer
    /// and can read them from the body.
    func storedDeleteSelfTargets(zone: Int64, name: String) throws -> [String] {
        guard
            let body = try Data.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM records WHERE zone = ? AND name = ?"), arguments: [zone, name])
        else { return [] }
        guard case .record(let record)? = try? CloudKitJSONDecoder().decode(bytes: Array(body)) else {
            throw LocalStoreError(.damaged, "\(store.path): record \(name) does not decode; restore the store from a bundle")
        }
        return Self.deleteSelfTargets(of: record)
    }

    /// Binds with `bind`, steps once to completion, and resets the statement whatever happened.
    private func execute(_ statement: Statement, bind: (OpaquePointer) -> Int32) throws {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var code = bind(handle)
        if code == SQLITE_OK { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
        }
    }

    /// Binds text (copied by SQLite before the call returns); "" is bound as empty text, not NULL.
    static func bind(_ handle: OpaquePointer, _ index: Int32, text: String) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, utf8.count > 0 else { return sqlite3_bind_text(handle, index, "", 0, transientBinding) }
            return sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(utf8.count), transientBinding)
        }
    }

    /// Binds bytes as a blob (copied by SQLite before the call returns); no bytes bind an empty blob, not NULL.
    static func bind(_ handle: OpaquePointer, _ index: Int32, blob: [UInt8]) -> Int32 {
        blob.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), transientBinding)
        }
    }

    /// SQLite copies bound values before the call returns.
    static let transientBinding = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
