/// Formats instants as ISO 8601 UTC text (`2016-11-05T00:53:20.250Z`) without Foundation's formatters.
///
/// Hand-written because `ISO8601DateFormatter` costs tens of microseconds per call on Linux (it builds ICU date
/// symbols each time), which dominated dumping a store with millions of dates. Days to civil dates follow Howard
/// Hinnant's `civil_from_days` algorithm (proleptic Gregorian calendar, any year).
public enum ISO8601Timestamp {
    /// The text of an instant given in milliseconds since 1970, with `.mmm` when `fractional`.
    public static func string(millisecondsSince1970 milliseconds: Int64, fractional: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(millisecondsSince1970: milliseconds, fractional: fractional, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the text of an instant given in milliseconds since 1970 to a byte buffer.
    public static func append(millisecondsSince1970 milliseconds: Int64, fractional: Bool, to bytes: inout [UInt8]) {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        if year < 0 || year > 9999 {
            bytes.append(year < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            append(abs(year), digits: 6, to: &bytes)
        } else {
            append(year, digits: 4, to: &bytes)
        }
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        append(secondOfDay / 3600, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(secondOfDay / 60 % 60, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, digits: 2, to: &bytes)
        if fractional {
            bytes.append(UInt8(ascii: "."))
            append(millis, digits: 3, to: &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The text of an instant in seconds since 2001-01-01 (Apple's reference date), rounded to the nearest
    /// millisecond; fractional seconds are shown only when the value has them.
    public static func string(secondsSince2001 seconds: Double) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(secondsSince2001: seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the text of an instant in seconds since 2001 to a byte buffer (see ``string(secondsSince2001:)``).
    public static func append(secondsSince2001 seconds: Double, to bytes: inout [UInt8]) {
        guard seconds.isFinite, abs(seconds) < 1e14 else {
            bytes.append(contentsOf: "\(seconds)".utf8)
            return
        }
        let milliseconds = millisecondsSince1970(secondsSince2001: seconds)
        append(millisecondsSince1970: milliseconds, fractional: seconds.rounded() != seconds, to: &bytes)
    }

    /// Milliseconds since 1970 of an instant in seconds since 2001, rounded to the nearest millisecond.
    ///
    /// Whole seconds and the fraction are taken apart, so the fraction is rounded exactly. (Foundation adds the 1970
    /// offset in floating point first, so within a few ulps of a half millisecond it can round the other way.)
    /// Values beyond ±10¹⁴ s are clamped.
    public static func millisecondsSince1970(secondsSince2001 seconds: Double) -> Int64 {
        guard seconds.isFinite else { return 0 }
        let clamped = min(max(seconds, -1e14), 1e14)
        var whole = clamped.rounded(.down)
        var fraction = ((clamped - whole) * 1000).rounded()
        if fraction >= 1000 {
            whole += 1
            fraction -= 1000
        }
        return (Int64(whole) + 978_307_200) * 1000 + Int64(fraction)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor
        let remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func append(_ value: Int64, digits: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<digits { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
