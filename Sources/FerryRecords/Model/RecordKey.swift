import FerryCore

/// A compact, fixed-size key for a record identity, for sets and maps over millions of records.
///
/// A 128-bit keyed hash of the zone and name (``SipHash128``, with a random key per process) stands in for the
/// strings: a collision among a billion records has a probability near 10⁻²¹, and input chosen to collide cannot be.
/// The hash is over the names' UTF-8 bytes, so a key is the same whether made from strings or from the bytes of a JSON
/// line. Keys are only meaningful within one process.
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

    /// The keyed hash all zones' seeds derive from: fresh random bits each process.
    private static let root = SipHash128.random()

    /// A zone's own keyed hash, from which the keys of its records are made by hashing only their names.
    ///
    /// The zone's name and owner (each followed by 0xFF, which never occurs in UTF-8, so no two pairs of names give
    /// the same bytes) are hashed with the process's root key into the zone's key: keys of different zones come from
    /// independent functions, and a record's key costs one hash of its name.
    public struct Seed: Sendable {
        private let function: SipHash128

        /// The seed of a zone, given by its name and owner.
        public init(zoneName: String, ownerName: String) {
            // Made for every key built from strings (a decoded record's, each of its references'): the bytes go on the
            // stack, not into an array.
            let zone = zoneName.utf8
            let owner = ownerName.utf8
            let (k0, k1) = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: zone.count + owner.count + 2) { bytes in
                var end = 0
                func append(_ name: String.UTF8View) {
                    for byte in name {
                        bytes[end] = byte
                        end += 1
                    }
                    bytes[end] = 0xFF
                    end += 1
                }
                append(zone)
                append(owner)
                return RecordKey.root.hash(UnsafeRawBufferPointer(bytes))
            }
            function = SipHash128(key: k0, k1)
        }

        /// The seed of a zone.
        public init(_ zone: ZoneID) { self.init(zoneName: zone.zoneName, ownerName: zone.ownerName) }

        /// The key of the record of this zone with this name (its UTF-8 bytes).
        @inline(__always)
        package func key(recordName: UnsafeRawBufferPointer) -> RecordKey {
            let (high, low) = function.hash(recordName)
            return RecordKey(high: high, low: low)
        }
    }
}
