import FerryCore
import Foundation

/// Small text helpers for human output.
enum Formatting {
    /// `1.2 MB`, `340 B`: decimal units, as `ls -h --si` and most tools show sizes.
    static func bytes(_ count: Int64) -> String { QuantityText.bytes(count) }

    /// The time since `start`, such as `1.25 s`.
    static func seconds(since start: Date) -> String {
        "\((Date().timeIntervalSince(start) * 100).rounded() / 100) s"
    }

    /// `1 record`, `3 records`.
    static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(value) \(value == 1 ? singular : (plural ?? singular + "s"))"
    }

    /// Prints a table too long to hold, as ``table(_:rightAligned:)`` would lay it out: `rows` hands the rows to the
    /// function it is given, and is called twice (once for the widths, once for the lines).
    static func table(
        header: [String], rightAligned: Set<Int> = [], rows: (([String]) throws -> Void) throws -> Void, line: (String) -> Void
    ) throws {
        var widths = header.map(\.count)
        try rows { row in for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
        func layout(_ row: [String]) -> String {
            row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: max(0, (index < widths.count ? widths[index] : 0) - cell.count))
                if index == row.count - 1 && !rightAligned.contains(index) { return cell }
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
        line(layout(header))
        try withoutActuallyEscaping(line) { line in try rows { line(layout($0)) } }
    }

    /// Columns padded to their widest cell; numeric columns (given by index) right-aligned.
    static func table(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
        guard let header = rows.first else { return [] }
        var lines: [String] = []
        // Rows from an array: nothing can throw.
        try? table(header: header, rightAligned: rightAligned, rows: { add in for row in rows.dropFirst() { try add(row) } }) {
            lines.append($0)
        }
        return lines
    }
}
