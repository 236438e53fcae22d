/// A position in one zone's change feed: the zone's number and the last change sequence seen.
///
/// Its text form (`<zone>-<sequence>`, both base 36) is opaque to clients, like CloudKit's tokens.
struct FeedPosition: Hashable {
    var zone: Int64
    var sequence: Int64

    var text: String { "\(String(zone, radix: 36))-\(String(sequence, radix: 36))" }

    init(zone: Int64, sequence: Int64) {
        self.zone = zone
        self.sequence = sequence
    }

    init?(text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let zone = Int64(parts[0], radix: 36), let sequence = Int64(parts[1], radix: 36), sequence >= 0 else { return nil }
        self.init(zone: zone, sequence: sequence)
    }
}
