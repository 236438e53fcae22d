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
            text +=
                unit == nil
                ? "\(QuantityText.bytes(done)) of \(QuantityText.bytes(total))"
                : "\(QuantityText.grouped(done)) of \(QuantityText.grouped(total)) \(unit ?? "")"
            text += " (\(percent)%)"
        } else {
            text += unit.map { "\(QuantityText.grouped(done)) \($0)" } ?? QuantityText.bytes(done)
        }
        guard elapsed >= 1, done > 0 else { return text }
        let rate = Double(done) / elapsed
        text += ", \(unit == nil ? QuantityText.bytes(Int64(rate)) : QuantityText.grouped(Int64(rate)))/s"
        if let total, total > done { text += ", \(QuantityText.duration(Double(total - done) / rate)) left" }
        return text
    }
}
