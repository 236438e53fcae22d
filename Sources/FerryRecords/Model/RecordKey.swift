/// A compact, fixed-size key for a record identity, for sets and maps over millions of records.
///
/// Two independent 64-bit hashes of the zone and name (128 bits) stand in for the strings: a collision among a
/// billion records has a probability near 10⁻²¹. Keys are only meaningful within one process.
public struct RecordKey: Sendable, Hashable {
    private let high: UInt64
    private let low: UInt64

    /// Creates the key of a record identity.
    public init(_ id: RecordID) {
        self.init(zoneName: id.zoneID.zoneName, ownerName: id.zoneID.ownerName, recordName: id.recordName)
    }

    /// Creates the key of a record identity from its parts.
    public init(zoneName: String, ownerName: String, recordName: String) {
        var first = Hasher()
        var second = Hasher()
        first.combine(0x5A17_0001 as UInt32)
        second.combine(0x5A17_0002 as UInt32)
        first.combine(zoneName)
        first.combine(ownerName)
        first.combine(recordName)
        second.combine(zoneName)
        second.combine(ownerName)
        second.combine(recordName)
        high = UInt64(bitPattern: Int64(first.finalize()))
        low = UInt64(bitPattern: Int64(second.finalize()))
    }
}
