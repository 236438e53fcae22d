import FerryCore

/// Sorts values whose order begins with a well-spread 64-bit prefix (a hash): one pass distributes them into buckets
/// by the prefix's top bits, then each bucket (a few dozen values) is sorted by comparison.
///
/// For hashed keys this is a few times faster than a comparison sort of the whole array, which on the ledger's
/// 40-byte entries spent most of its time moving values through seventeen merge passes. Values whose prefixes are
/// not spread (all equal, say) land in one bucket and are sorted by comparison there: slower, never wrong.
@usableFromInline
enum PrefixBucketSort {
    /// Values per bucket aimed at.
    @usableFromInline static let bucketSize = 16
    /// The most prefix bits used (65 536 buckets).
    @usableFromInline static let maxBits = 16

    /// Sorts `values` ascending, given `prefix` with `a < b` implying `prefix(a) <= prefix(b)`.
    @inlinable
    static func sort<Element: Comparable>(_ values: inout [Element], prefix: (Element) -> UInt64) {
        let count = values.count
        guard count > 4 * bucketSize else { return values.sort() }
        let bits = min(maxBits, Int.bitWidth - (count / bucketSize).leadingZeroBitCount)
        let shift = UInt64(UInt64.bitWidth - bits)
        // starts[b + 1] counts bucket b, then becomes where bucket b + 1 starts.
        var starts = [Int](repeating: 0, count: (1 << bits) + 1)
        for value in values { starts[Int(truncatingIfNeeded: prefix(value) >> shift) &+ 1] &+= 1 }
        for bucket in 1..<starts.count { starts[bucket] &+= starts[bucket - 1] }
        let sorted = [Element](unsafeUninitializedCapacity: count) { target, initialized in
            var next = starts
            for value in values {
                let bucket = Int(truncatingIfNeeded: prefix(value) >> shift)
                (target.baseAddress.unsafelyUnwrapped + next[bucket]).initialize(to: value)
                next[bucket] &+= 1
            }
            initialized = count
            for bucket in 0..<(starts.count - 1) where starts[bucket + 1] - starts[bucket] > 1 {
                target[starts[bucket]..<starts[bucket + 1]].sort()
            }
        }
        values = sorted
    }
}
