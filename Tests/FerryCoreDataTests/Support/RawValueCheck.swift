import FerryCore
import FerryCoreData
import FerryJSON
import Foundation

/// A column value as the `sqlite3` shell reports it: `typeof(c)` and the value (blobs as hex).
struct RawValue: CustomStringConvertible {
    var type: String
    var value: JSONValue

    /// The query expressions that produce a column's type and value.
    static func select(_ column: String, as alias: String) -> String {
        let quoted = "\"\(column)\""
        return
            "typeof(\(quoted)) AS \"\(alias).type\", CASE typeof(\(quoted)) WHEN 'blob' THEN hex(\(quoted)) ELSE \(quoted) END AS \"\(alias).value\""
    }

    init(row: JSONObject, alias: String) {
        type = row["\(alias).type"]?.stringValue ?? "missing"
        value = row["\(alias).value"] ?? .null
    }

    var description: String { "\(type) \(value)" }

    var number: Double? { value.doubleValue ?? value.int64Value.map(Double.init) }
    var hex: String? { type == "blob" ? value.stringValue : nil }

    /// Whether a decoded attribute value is what this raw value means, converted here independently of Ferry:
    /// numbers by their SQLite storage, dates as seconds since 2001, UUIDs as their 16 bytes, blobs byte for byte.
    func matches(_ decoded: ObjectValue) -> Bool {
        switch decoded {
        case .null: return type == "null"
        case .integer(let integer): return type == "integer" && value.int64Value == integer
        case .boolean(let flag): return type == "integer" && (value.int64Value != 0) == flag
        case .double(let double), .date(let double): return close(number, double)
        case .decimal(let text): return close(number, Double(text))
        case .string(let text), .uri(let text): return type == "text" && value.stringValue == text
        case .uuid(let uuid): return hex == uuid.uuidString.replacingOccurrences(of: "-", with: "")
        case .data(let bytes):
            let expected = Self.hex(bytes)
            return hex == expected || hex == "01" + expected
        case .opaque(let bytes): return hex == Self.hex(bytes)
        case .externalData(let external): return hex == "02" + Self.hex(Array(external.uuid.utf8)) + "00"
        case .archived(_, let bytes), .plist(_, let bytes): return hex == Self.hex(bytes)
        case .unexpected(let raw), .raw(let raw):
            switch raw {
            case .null: return type == "null"
            case .integer(let integer): return value.int64Value == integer
            case .real(let double): return close(number, double)
            case .text(let text): return value.stringValue == text
            case .blob(let bytes): return hex == Self.hex(bytes)
            }
        }
    }

    private func close(_ lhs: Double?, _ rhs: Double?) -> Bool {
        guard let lhs, let rhs else { return false }
        // The shell prints reals with 15 significant digits.
        return lhs == rhs || abs(lhs - rhs) <= max(abs(lhs), abs(rhs)) * 1e-13
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
