import FerryCore
import Foundation

/// The time a bundle is stamped with: given, from `SOURCE_DATE_EPOCH`, or the newest input's modification time.
enum CreationTime {
    /// Parses an ISO 8601 time or a number of seconds since 1970.
    static func parse(_ text: String) -> Date? {
        if let seconds = Int64(text) { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// The flag's time, else `SOURCE_DATE_EPOCH`, else the newest modification time among `inputs`.
    static func resolve(flag: String?, inputs: [String]) throws -> Date {
        if let flag, let date = parse(flag) { return date }
        if let epoch = Environment.value("SOURCE_DATE_EPOCH") {
            guard let seconds = Int64(epoch) else {
                throw CoreError(.readFailed, "SOURCE_DATE_EPOCH=\(epoch) is not a number of seconds")
            }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        var newest = Date(timeIntervalSince1970: 0)
        for input in inputs where input != "/dev/stdin" {
            if let modified = try? FileManager.default.attributesOfItem(atPath: input)[.modificationDate] as? Date {
                newest = max(newest, modified)
            }
        }
        return newest
    }
}
