import FerryCore
import Foundation

/// A progress line on a terminal for one task, with its start time (for the rate and the time left).
///
/// Drawn through ``Console/progress(_:)``, which any thread may call and which draws at most ten times a second, only
/// on a terminal; the text is ``FerryCore/ProgressLine``'s.
struct ProgressMeter: Sendable {
    let console: Console
    /// What is being done: `copying a → b`.
    let label: String
    /// What is counted: `changes`, or `nil` for bytes.
    let unit: String?
    /// The count when done, when known (asked only when progress is drawn: counting may cost a scan).
    let total: Int64?
    let started = Date()

    init(console: Console, label: String, unit: String?, total: @autoclosure () -> Int64?) {
        self.console = console
        self.label = label
        self.unit = unit
        self.total = console.drawsProgress ? total() : nil
    }

    /// Draws the line for `done` units (of `total`, when the meter was made without one).
    func update(_ done: Int64, total: Int64? = nil) {
        console.progress(
            ProgressLine.text(label: label, done: done, total: total ?? self.total, unit: unit, elapsed: Date().timeIntervalSince(started)))
    }
}
