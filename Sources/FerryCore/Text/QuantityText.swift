/// Counts, sizes and durations written for people, the same way in every message and progress line.
public enum QuantityText {
    /// `1.2 MB`, `340 B`: decimal units, as `ls -h --si` and most tools show sizes.
    public static func bytes(_ count: Int64) -> String {
        if count < 1000 { return "\(count) B" }
        let units = ["kB", "MB", "GB", "TB", "PB"]
        var value = Double(count) / 1000
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return "\(rounded(value)) \(units[unit])"
    }

    /// `1.0 GiB`, `256 KiB`: binary units, for limits given in powers of 1024 (`--max-output 1G`).
    public static func binaryBytes(_ count: Int64) -> String {
        if count == .max { return "more than 9 EB" }
        let units: [(Int64, String)] = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (scale, unit) in units where count >= scale { return "\(rounded(Double(count) / Double(scale))) \(unit)" }
        return "\(count) bytes"
    }

    /// `120 000`: digits in groups of three.
    public static func grouped(_ number: Int64) -> String {
        let digits = String(number.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(" ") }
            out.append(digit)
        }
        return (number < 0 ? "-" : "") + out
    }

    /// `6 s`, `4 min 10 s`, `2 h 5 min`.
    public static func duration(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded(.up)))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }

    /// `340`, `12.5`: whole from 100 up, one decimal below.
    private static func rounded(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10)
    }
}
