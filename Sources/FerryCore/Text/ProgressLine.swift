/// The text of a progress line: how far, and where the total is known the percent, the rate and the time left.
///
/// `copying a → b: 45 000 of 120 000 changes (37%), 12 300/s, 6 s left`; counts of bytes read `1.2 GB of 3.4 GB`.
public enum ProgressLine {
    /// The line for `done` of `total` (when known) after `elapsed` seconds.
    ///
    /// `unit` names what is counted, `nil` for bytes. The rate and time left appear after the first second.
    public static func text(label: String, done: Int64, total: Int64?, unit: String?, elapsed: Double) -> String {
        var text = "\(label): "
        if let total, total > 0 {
            // Totals from a store's object counts are close, not exact: never above 99% before the end.
            let percent = min(99, Int(Double(done) * 100 / Double(total)))
            text += unit == nil ? "\(bytes(done)) of \(bytes(total))" : "\(grouped(done)) of \(grouped(total)) \(unit ?? "")"
            text += " (\(percent)%)"
        } else {
            text += unit.map { "\(grouped(done)) \($0)" } ?? bytes(done)
        }
        guard elapsed >= 1, done > 0 else { return text }
        let rate = Double(done) / elapsed
        text += ", \(unit == nil ? bytes(Int64(rate)) : grouped(Int64(rate)))/s"
        if let total, total > done { text += ", \(duration(Double(total - done) / rate)) left" }
        return text
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

    /// `1.2 MB`, `340 B`: decimal units.
    public static func bytes(_ count: Int64) -> String {
        if count < 1000 { return "\(count) B" }
        let units = ["kB", "MB", "GB", "TB", "PB"]
        var value = Double(count) / 1000
        var unit = 0
        while value >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let rounded = value >= 100 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10)
        return "\(rounded) \(units[unit])"
    }
}
