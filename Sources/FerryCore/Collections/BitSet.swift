/// A set of small non-negative integers below a fixed bound, one bit each: marks for the entries of a table by rank.
public struct BitSet: Sendable {
    private var words: [UInt64]
    /// The bound: members are in `0..<capacity`.
    public let capacity: Int

    /// An empty set for members below `capacity`.
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
        words = [UInt64](repeating: 0, count: (self.capacity + 63) / 64)
    }

    /// Whether `member` is in the set.
    public func contains(_ member: Int) -> Bool {
        guard member >= 0, member < capacity else { return false }
        return words[member >> 6] & (1 << UInt64(member & 63)) != 0
    }

    /// Adds `member` (which must be below the capacity); returns whether it was not there yet.
    @discardableResult
    public mutating func insert(_ member: Int) -> Bool {
        precondition(member >= 0 && member < capacity, "BitSet member \(member) is outside 0..<\(capacity)")
        let bit: UInt64 = 1 << UInt64(member & 63)
        defer { words[member >> 6] |= bit }
        return words[member >> 6] & bit == 0
    }
}
