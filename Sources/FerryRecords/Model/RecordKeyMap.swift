/// A map from record keys to small values, for tables over millions of records, kept in 256 shards.
///
/// A single dictionary doubles its storage as it grows, and while it rehashes holds the old table and the new one:
/// for a million records that transient is tens of megabytes on top of the table. Shards grow one at a time, so the
/// transient is 1/256 of that. Keys are already uniform hashes, so their low byte spreads them evenly.
public struct RecordKeyMap<Value: Sendable>: Sendable {
    private var shards: [[RecordKey: Value]] = Array(repeating: [:], count: 256)

    /// An empty map.
    public init() {}

    @inline(__always)
    private static func shard(_ key: RecordKey) -> Int { Int(truncatingIfNeeded: key.words.low & 0xFF) }

    /// The value for a key.
    public subscript(key: RecordKey) -> Value? {
        get { shards[Self.shard(key)][key] }
        set { shards[Self.shard(key)][key] = newValue }
    }

    /// The value for a key, or `defaultValue`, for updating in place.
    public subscript(key: RecordKey, default defaultValue: @autoclosure () -> Value) -> Value {
        get { shards[Self.shard(key)][key, default: defaultValue()] }
        set { shards[Self.shard(key)][key, default: defaultValue()] = newValue }
    }

    /// Sets a value, returning the one it replaced.
    @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: RecordKey) -> Value? {
        shards[Self.shard(key)].updateValue(value, forKey: key)
    }

    /// The number of keys.
    public var count: Int { shards.reduce(0) { $0 + $1.count } }
}
