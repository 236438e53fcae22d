import FerryCore
import Foundation
import Testing

@Suite struct ISO8601TimestampTests {
    @Test func matchesFoundationsFormatter() {
        let whole = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SystemRandomNumberGenerator()
        var samples: [Double] = [0, 0.0006, 0.9996, 0.2504, -0.0004, -1.9996, 500_000_000.25, 1e-9, 123.4567, -978_307_200, 86_399.9999]
        for _ in 0..<20_000 {
            // Years 1601 to 9999, whole and fractional seconds.
            let seconds = Double.random(in: -12_600_000_000...252_000_000_000, using: &generator)
            samples.append(seconds)
            samples.append(seconds.rounded())
        }
        for seconds in samples {
            let formatter = seconds.rounded() == seconds ? whole : fractional
            let expected = formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
            let actual = ISO8601Timestamp.string(secondsSince2001: seconds)
            if actual == expected { continue }
            // Foundation adds the 1970 offset in floating point before rounding, so a value within a few ulps of a
            // half millisecond can round the other way there; Ferry rounds the exact fraction.
            let milliseconds = (seconds - seconds.rounded(.down)) * 1000
            let distance = abs(milliseconds - milliseconds.rounded(.down) - 0.5)
            let ours = (Int64(seconds.rounded(.down)) + 978_307_200) * 1000 + Int64(milliseconds.rounded())
            let neighbours = [ours - 1, ours + 1].map { ISO8601Timestamp.string(millisecondsSince1970: $0, fractional: true) }
            #expect(distance < 0.05 && neighbours.contains(expected), "\(seconds): \(actual) vs \(expected)")
        }
    }

    @Test func formatsMillisecondsSince1970() {
        #expect(ISO8601Timestamp.string(millisecondsSince1970: 0, fractional: false) == "1970-01-01T00:00:00Z")
        #expect(ISO8601Timestamp.string(millisecondsSince1970: 1_479_340_800_123, fractional: true) == "2016-11-17T00:00:00.123Z")
        #expect(ISO8601Timestamp.string(millisecondsSince1970: -1, fractional: true) == "1969-12-31T23:59:59.999Z")
        #expect(ISO8601Timestamp.string(millisecondsSince1970: 951_782_400_000, fractional: false) == "2000-02-29T00:00:00Z")
    }
}
