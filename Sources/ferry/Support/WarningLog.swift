import Foundation

/// Warnings about changes: the first 20 on stderr (all of them with `--json`), then a pointer to `--json`.
struct WarningLog {
    let console: Console
    private(set) var count = 0
    private static let shown = 20

    init(console: Console) { self.console = console }

    mutating func add(_ text: String) {
        count += 1
        if count <= Self.shown || console.json { console.warning(text) }
        if count == Self.shown + 1, !console.json { console.warning("more warnings; run with --json to see them all") }
    }
}
