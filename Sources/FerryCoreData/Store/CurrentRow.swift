import GRDB
import GRDBSQLite

/// The row a statement's cursor stands on, read straight from the statement.
///
/// `Row.value(at:)` goes through GRDB's generic value decoding, which looks up generic metadata for every value:
/// a sixth of a store scan's time. Valid from a cursor's `next()` until the next one.
struct CurrentRow {
    let statement: Statement

    /// The value at a column index, whatever its type.
    func value(at index: Int) -> DatabaseValue { DatabaseValue(sqliteStatement: statement.sqliteStatement, index: CInt(index)) }

    /// The integer at a column index, as ``DatabaseValue/integerValue`` reads it (a whole REAL, a TEXT of digits);
    /// an INTEGER (which keys are) or a NULL is read without making a `DatabaseValue`.
    func integer(at index: Int) -> Int64? {
        let handle = statement.sqliteStatement
        switch sqlite3_column_type(handle, CInt(index)) {
        case SQLITE_INTEGER: return sqlite3_column_int64(handle, CInt(index))
        case SQLITE_NULL: return nil
        default: return value(at: index).integerValue
        }
    }

    /// The value at a column index as an object's attribute keeps it: a blob is copied once, into the array it ends up
    /// in (through `DatabaseValue` it was copied into `Data`, two allocations, then into an array); text is read up to
    /// its first NUL, as GRDB reads it.
    func sqliteValue(at index: Int) -> SQLiteValue {
        let handle = statement.sqliteStatement
        let column = CInt(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(sqlite3_column_text(handle, column).map { String(cString: $0) } ?? "")
        default:
            // The blob first, then its size (SQLite's documented order).
            guard let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column)))))
        }
    }
}
