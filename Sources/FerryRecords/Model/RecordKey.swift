import FerryCore

/// A compact, fixed-size key for a record identity, for sets and maps over millions of records.
///
/// Two independent 64-bit hashes of the zone and name (128 bits) stand in for the strings: a collision among a
/// billion records has a probability near 10⁻²¹. The hashes are over the names' UTF-8 bytes, so a key is the same
/// whether made from strings or from the bytes of a JSON line. Keys are only meaningful within one process.
public struct RecordKey: Sendable, Hashable {
    private let high: UInt64
    private let low: UInt64

    /// Creates the key of a record identity.
    public init(_ id: RecordID) {
        self.init(zoneName: id.zoneID.zoneName, ownerName: id.zoneID.ownerName, recordName: id.recordName)
    }

    /// Creates the key of a record identity from its parts.
    public init(zoneName: String, ownerName: String, recordName: String) {
        self = recordName.withUTF8Bytes { Seed(zoneName: zoneName, ownerName: ownerName).key(recordName: UnsafeRawBufferPointer($0)) }
    }

    /// A key from its two words, as ``words`` gives them (to read one back from a scratch file).
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The key's two words, in the order keys sort by.
    public var words: (high: UInt64, low: UInt64) { (high, low) }

    /// The hashing state after a zone, from which the keys of that zone's records are made by hashing only their names.
    public struct Seed: Sendable {
        private var first = Hasher()
        private var second = Hasher()

        /// The seed of a zone, given by its name and owner.
        public init(zoneName: String, ownerName: String) {
            first.combine(0x5A17_0001 as UInt32)
            second.combine(0x5A17_0002 as UInt32)
            zoneName.withUTF8Bytes { add(UnsafeRawBufferPointer($0)) }
            ownerName.withUTF8Bytes { add(UnsafeRawBufferPointer($0)) }
        }

        /// The seed of a zone.
        public init(_ zone: ZoneID) { self.init(zoneName: zone.zoneName, ownerName: zone.ownerName) }

        /// The key of the record of this zone with this name (its UTF-8 bytes).
        public func key(recordName: UnsafeRawBufferPointer) -> RecordKey {
            var seed = self
            seed.add(recordName)
            return RecordKey(high: UInt64(bitPattern: Int64(seed.first.finalize())), low: UInt64(bitPattern: Int64(seed.second.finalize())))
        }

        /// Adds one name and a terminator (0xFF never occurs in UTF-8), so that no two sequences of names hash alike
        /// by construction.
        @inline(__always)
        private mutating func add(_ bytes: UnsafeRawBufferPointer) {
            first.combine(bytes: bytes)
            second.combine(bytes: bytes)
            first.combine(0xFF as UInt8)
            second.combine(0xFF as UInt8)
        }
    }
}
