import Foundation
import GRDB

/// Writes an SQLite file from SQL statements and their arguments, in one transaction: for stores made by hand in tests
/// and fuzz targets (hostile bookkeeping a Core Data builder would never write).
public enum SQLiteFile {
    /// One statement and its arguments (text, integers, doubles, bytes or null).
    public struct Statement {
        public var sql: String
        public var arguments: [Value]

        public init(_ sql: String, _ arguments: [Value] = []) {
            self.sql = sql
            self.arguments = arguments
        }
    }

    /// A value bound to a statement.
    public enum Value {
        case null, integer(Int64), double(Double), text(String), bytes([UInt8])

        var database: DatabaseValue {
            switch self {
            case .null: .null
            case .integer(let number): number.databaseValue
            case .double(let number): number.databaseValue
            case .text(let text): text.databaseValue
            case .bytes(let bytes): Data(bytes).databaseValue
            }
        }
    }

    /// Creates (or replaces) the file at `path` with the statements run in order; a statement SQLite refuses is
    /// skipped (hostile inputs are made of such guesses).
    public static func write(_ statements: [Statement], to path: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let queue = try DatabaseQueue(path: path)
        try queue.inTransaction { db in
            for statement in statements {
                try? db.execute(sql: statement.sql, arguments: StatementArguments(statement.arguments.map(\.database)))
            }
            return .commit
        }
        try queue.close()
    }
}
