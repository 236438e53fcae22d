import ArgumentParser
import FerryCore
import Foundation

/// The time a bundle is stamped with: given, from `SOURCE_DATE_EPOCH`, or the newest input's modification time.
enum CreationTime {
    /// The latest time a bundle can be stamped with: 9999-12-31T23:59:59Z, the last that ISO 8601's four-digit
    /// years (and so `manifest.json`'s `createdAt`) can write.
    static let latest: Int64 = 253_402_300_799

    /// Parses an ISO 8601 time, an ISO 8601 date (its midnight, UTC) or a number of seconds since 1970, from 1970 to
    /// the end of 9999.
    static func parse(_ text: String) -> Date? {
        let date: Date?
        if let seconds = Int64(text) {
            date = Date(timeIntervalSince1970: TimeInterval(seconds))
        } else {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            var parsed = formatter.date(from: text)
            if parsed == nil {
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                parsed = formatter.date(from: text)
            }
            if parsed == nil, text.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil {
                // A date alone: its midnight, UTC.
                formatter.formatOptions = [.withFullDate]
                formatter.timeZone = TimeZone(identifier: "UTC")
                parsed = formatter.date(from: text)
            }
            date = parsed
        }
        guard let date, inRange(date) else { return nil }
        return date
    }

    private static func inRange(_ date: Date) -> Bool {
        date.timeIntervalSince1970 >= 0 && date.timeIntervalSince1970 <= TimeInterval(latest)
    }

    /// The flag's time, else `SOURCE_DATE_EPOCH`, else the newest modification time among `inputs`.
    static func resolve(flag: TimeArgument?, inputs: [String]) throws -> Date {
        if let known = try known(flag: flag) { return known }
        var newest = Date(timeIntervalSince1970: 0)
        for input in inputs where input != "/dev/stdin" {
            if let modified = try? FileManager.default.attributesOfItem(atPath: input)[.modificationDate] as? Date {
                newest = max(newest, modified)
            }
        }
        return newest
    }
}

extension CreationTime {
    /// The time known before anything is read: the flag's, else `SOURCE_DATE_EPOCH`'s, else `database` (when the
    /// source is a database, which has no file to take a time from: when the copy began reading it).
    static func known(flag: TimeArgument?, database: Date? = nil) throws -> Date? {
        if let flag { return flag.date }
        if let epoch = Environment.value("SOURCE_DATE_EPOCH") {
            guard let seconds = Int64(epoch), (0...latest).contains(seconds) else {
                throw CoreError(.readFailed, "SOURCE_DATE_EPOCH=\(epoch) is not a number of seconds from 1970 to the end of 9999")
            }
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        return database.map { Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)) }
    }
}

/// A time given on the command line (`--created-at`, `--since`), parsed once where it is given: an ISO 8601 time, an
/// ISO 8601 date (its midnight, UTC) or seconds since 1970, from 1970 to the end of 9999.
struct TimeArgument: ExpressibleByArgument, Sendable {
    /// The time.
    let date: Date

    init?(argument: String) {
        guard let date = CreationTime.parse(argument) else { return nil }
        self.date = date
    }

    /// Milliseconds since 1970, as TIMESTAMP fields hold them.
    var milliseconds: Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    static var defaultCompletionKind: CompletionKind { .default }
}
