import FerryCore
import FerryJSON
import Foundation

extension PlistValue {
    /// The plist's JSON form: dates as ISO 8601 strings, data as base64, UIDs as `{"$uid": n}`, sets as arrays.
    public var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .unsigned(let number): .unsigned(number)
        case .real(let number): number.isFinite ? .number(number) : .string("\(number)")
        case .date(let seconds): .string(PlistValue.iso8601(seconds))
        case .data(let bytes): .string(Data(bytes).base64EncodedString())
        case .string(let text): .string(text)
        case .uid(let uid): ["$uid": .integer(Int64(uid))]
        case .array(let elements), .set(let elements), .orderedSet(let elements): .array(elements.map(\.jsonValue))
        case .dictionary(let entries): .object(JSONObject(entries.map { JSONObject.Member(key: $0.key, value: $0.value.jsonValue) }))
        }
    }

    /// Seconds since 2001 as an ISO 8601 UTC time, with fractional seconds when there are any.
    public static func iso8601(_ secondsSince2001: Double) -> String {
        ISO8601Timestamp.string(secondsSince2001: secondsSince2001)
    }
}
