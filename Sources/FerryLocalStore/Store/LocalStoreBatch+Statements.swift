import FerryCore
import GRDB
import GRDBSQLite

/// The statements every copied record runs, found in GRDB's statement cache once per batch (finding one hashes its
/// SQL, which cost as much as a lookup when done per record).
struct BatchStatements {
    var state: Statement?
    var upsert: Statement?
    /// The plain insert of a bulk load.
    var bulkInsert: Statement?
    var reference: Statement?
}

extension LocalStoreBatch {
    /// The statement kept in `slot`, prepared (through GRDB's cache) on first use in this batch.
    func statement(_ slot: WritableKeyPath<BatchStatements, Statement?>, sql: String) throws -> Statement {
        if let statement = statements[keyPath: slot] { return statement }
        let statement = try db.cachedStatement(sql: sql)
        statements[keyPath: slot] = statement
        return statement
    }

    /// Runs a statement once through its SQLite handle: `bind` binds its parameters, one step runs it, `read` reads
    /// the row it stands on (if any), and the statement is reset whatever happened.
    ///
    /// The statements stay GRDB's (prepared once, cached); only binding, stepping and reading columns are done here.
    /// Through GRDB each run built `StatementArguments`, copied blobs into `Data`, and fetching built a cursor, a row
    /// and a column-name table: more than SQLite's own index search for the lookups and writes of every copied record.
    func step<Result>(
        _ statement: Statement, bind: (OpaquePointer) -> Int32, read: (_ handle: OpaquePointer, _ hasRow: Bool) throws -> Result
    ) throws -> Result {
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        var code = bind(handle)
        if code == SQLITE_OK { code = sqlite3_step(handle) }
        guard code == SQLITE_ROW || code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
        }
        return try read(handle, code == SQLITE_ROW)
    }

    /// Runs a statement that returns no row (see ``step(_:bind:read:)``).
    func execute(_ statement: Statement, bind: (OpaquePointer) -> Int32) throws {
        try step(statement, bind: bind) { _, _ in }
    }

    /// Binds text (copied by SQLite before the call returns); "" is bound as empty text, not NULL.
    static func bind(_ handle: OpaquePointer, _ index: Int32, text: String) -> Int32 {
        text.withUTF8Bytes { utf8 in
            guard let base = utf8.baseAddress, utf8.count > 0 else { return sqlite3_bind_text(handle, index, "", 0, transientBinding) }
            return sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(utf8.count), transientBinding)
        }
    }

    /// Binds bytes as a blob (copied by SQLite before the call returns); no bytes bind an empty blob, not NULL.
    static func bind(_ handle: OpaquePointer, _ index: Int32, blob bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), transientBinding)
    }

    /// Binds bytes as a blob without copying them: they must stay valid until the statement is reset, so bind them
    /// inside their buffer's scope and run the statement there (``step(_:bind:read:)`` resets it before returning).
    static func bind(_ handle: OpaquePointer, _ index: Int32, borrowedBlob bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return sqlite3_bind_blob(handle, index, base, Int32(bytes.count), nil)
    }

    /// A TEXT column as a string (its bytes, not up to a NUL).
    static func text(_ handle: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    /// SQLite copies bound values before the call returns.
    private static let transientBinding = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
