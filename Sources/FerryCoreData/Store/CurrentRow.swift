import GRDB

/// The row a statement's cursor stands on, read straight from the statement.
///
/// `Row.value(at:)` goes through GRDB's generic value decoding, which looks up generic metadata for every value:
/// a sixth of a store scan's time. Valid from a cursor's `next()` until the next one.
struct CurrentRow {
    let statement: Statement

    /// The value at a column index, whatever its type.
    func value(at index: Int) -> DatabaseValue { DatabaseValue(sqliteStatement: statement.sqliteStatement, index: CInt(index)) }
}
