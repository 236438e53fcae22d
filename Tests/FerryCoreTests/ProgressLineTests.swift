import FerryCore
import Testing

/// Progress lines: counts, percent, rate and time left where the total is known.
@Suite struct ProgressLineTests {
    @Test func countsPercentRateAndTimeLeft() {
        #expect(ProgressLine.text(label: "copying a → b", done: 14, total: nil, unit: "changes", elapsed: 0.2) == "copying a → b: 14 changes")
        #expect(
            ProgressLine.text(label: "copying a → b", done: 45_000, total: 120_000, unit: "changes", elapsed: 0.5)
                == "copying a → b: 45 000 of 120 000 changes (37%)")
        #expect(
            ProgressLine.text(label: "copying a → b", done: 45_000, total: 120_000, unit: "changes", elapsed: 3)
                == "copying a → b: 45 000 of 120 000 changes (37%), 15 000/s, 5 s left")
        #expect(
            ProgressLine.text(label: "verifying b.tar.zst", done: 1_200_000_000, total: 3_400_000_000, unit: nil, elapsed: 2)
                == "verifying b.tar.zst: 1.2 GB of 3.4 GB (35%), 600 MB/s, 4 s left")
        // A total that was only close: never above 99% until the end, no time left past it.
        #expect(ProgressLine.text(label: "x", done: 130, total: 120, unit: "objects", elapsed: 2) == "x: 130 of 120 objects (99%), 65/s")
        #expect(QuantityText.duration(250) == "4 min 10 s" && QuantityText.duration(7500) == "2 h 5 min")
        #expect(QuantityText.grouped(1_234_567) == "1 234 567" && QuantityText.grouped(999) == "999")
    }
}
