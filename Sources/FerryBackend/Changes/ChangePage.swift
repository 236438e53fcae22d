import FerryRecords

/// A position in one zone's change feed, opaque to clients (as CloudKit's `syncToken`): only the backend that issued
/// it reads it.
public struct SyncToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's text, as the backend issued it.
    public var text: String

    /// Wraps a token's text.
    public init(_ text: String) { self.text = text }

    public var description: String { text }

    /// A backend's token for a position in a zone's feed: `<tag><zone>-<sequence>`, both base 36; the tag tells whose
    /// token it is.
    package init(tag: String, zone: Int64, sequence: Int64) {
        text = "\(tag)\(String(zone, radix: 36))-\(String(sequence, radix: 36))"
    }

    /// The zone and sequence of a token made by ``init(tag:zone:sequence:)`` with `tag`; `nil` for any other token.
    package func position(tag: String) -> (zone: Int64, sequence: Int64)? {
        guard text.hasPrefix(tag) else { return nil }
        let parts = text.dropFirst(tag.count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let zone = Int64(parts[0], radix: 36), let sequence = Int64(parts[1], radix: 36), sequence >= 0 else {
            return nil
        }
        return (zone, sequence)
    }
}

/// One page of a zone's change feed (`records/changes`).
public struct ChangePage: Sendable {
    /// Records changed since the token, each once in its latest state, and tombstones of deleted ones, in change order.
    public var changes: [RecordChange]
    /// The token to ask from next time.
    public var syncToken: SyncToken
    /// Whether more changes follow this page.
    public var moreComing: Bool

    /// Creates a page.
    public init(changes: [RecordChange], syncToken: SyncToken, moreComing: Bool) {
        self.changes = changes
        self.syncToken = syncToken
        self.moreComing = moreComing
    }
}

/// One zone of a backend and the token of its latest change (``RecordStore/zoneTokens()``).
public struct ZoneToken: Sendable, Hashable {
    /// The zone.
    public var zoneID: ZoneID
    /// The token of the zone's latest change, when the backend has a change feed.
    public var syncToken: SyncToken?

    /// Creates a zone's token.
    public init(zoneID: ZoneID, syncToken: SyncToken?) {
        self.zoneID = zoneID
        self.syncToken = syncToken
    }
}

/// One zone of a backend, with its current sync token and number of live records.
public struct ZoneSummary: Sendable, Hashable {
    /// The zone.
    public var zoneID: ZoneID
    /// The token of the zone's latest change, when the backend has a change feed.
    public var syncToken: SyncToken?
    /// Live records in the zone.
    public var recordCount: Int

    /// Creates a summary.
    public init(zoneID: ZoneID, syncToken: SyncToken?, recordCount: Int) {
        self.zoneID = zoneID
        self.syncToken = syncToken
        self.recordCount = recordCount
    }
}
