import Foundation
import GRDB

/// Conversions that never trap: a hostile store can put any SQLite value in any column, and GRDB's typed row
/// subscripts stop the process when a value does not convert. Ferry reads `DatabaseValue`s and converts here.
extension DatabaseValue {
    /// An integer, or a real with an integral value, or decimal text; `nil` for anything else.
    var integerValue: Int64? {
        switch storage {
        case .int64(let number): number
        case .double(let number): Int64(exactly: number)
        case .string(let text): Int64(text)
        case .null, .blob: nil
        }
    }

    /// Text, or a blob that is valid UTF-8; `nil` for anything else.
    var textValue: String? {
        switch storage {
        case .string(let text): text
        case .blob(let data): String(validating: data, as: UTF8.self)
        case .null, .int64, .double: nil
        }
    }

    /// A blob, or text as its UTF-8 bytes; `nil` for anything else.
    var bytesValue: [UInt8]? {
        switch storage {
        case .blob(let data): Array(data)
        case .string(let text): Array(text.utf8)
        case .null, .int64, .double: nil
        }
    }
}

extension Row {
    /// The value at a column index, whatever its type.
    func value(at index: Int) -> DatabaseValue { self[index] }
}
