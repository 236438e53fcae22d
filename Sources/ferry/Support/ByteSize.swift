import Foundation

/// Sizes given on the command line: bytes, or a number with K, M, G or T (powers of 1024, `B`/`iB` optional).
enum ByteSize {
    static func parse(_ text: String) -> Int64? {
        var digits = text.trimmingCharacters(in: .whitespaces).uppercased()
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits.removeLast(suffix.count)
            break
        }
        var scale: Int64 = 1
        if let unit = digits.last, let power = ["K": 10, "M": 20, "G": 30, "T": 40][String(unit)] {
            scale = 1 << power
            digits.removeLast()
        }
        guard let number = Int64(digits.trimmingCharacters(in: .whitespaces)), number > 0 else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : bytes
    }
}
