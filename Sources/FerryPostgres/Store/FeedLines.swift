import FerryBackend
import FerryJSON
import FerryRecords
import PostgresNIO

/// The lines of a page of a zone's feed, written row by row (``FeedRow``): each record's system fields, its fields'
/// `jsonb` text as the server wrote it (not decoded), its name, type and zone.
struct FeedLines: Sendable {
    let zone: ZoneID
    /// `,"zoneID":{…}}`, which ends every line of the zone.
    let tail: [UInt8]
    var json: JSONWriter
    var entries: [LinePage.Entry] = []

    /// Room for about `rows` lines of `zone`.
    init(zone: ZoneID, rows: Int) {
        self.zone = zone
        var tail = JSONWriter(capacity: 96)
        tail.raw(",\"zoneID\":{\"ownerRecordName\":")
        tail.string(zone.ownerName)
        tail.raw(",\"zoneName\":")
        tail.string(zone.zoneName)
        tail.raw("}}")
        self.tail = tail.bytes
        json = JSONWriter(capacity: min(rows, 1 << 16) * 512)
        entries.reserveCapacity(min(rows, 1 << 16))
    }

    /// Writes a row's line, or notes its tombstone; gives the row's change sequence.
    mutating func append(_ row: PostgresRow, store: String) throws -> Int64 {
        let row = try FeedRow(row, store: store)
        if let deletion = row.tombstone(in: zone) {
            entries.append(.deletion(deletion))
            return row.sequence
        }
        let fields = try row.requiredFieldsRange(in: zone, store: store)
        row.withBytes { bytes in
            json.byte(UInt8(ascii: "{"))
            let tag = UnsafeRawBufferPointer(rebasing: bytes[row.tagRange])
            LinePage.writeSystemFields(tag: tag, created: row.created, modified: row.modified, into: &json)
            json.raw(",\"fields\":")
            json.raw(UnsafeRawBufferPointer(rebasing: bytes[fields]))
            json.raw(",\"recordName\":")
            json.string(utf8: UnsafeRawBufferPointer(rebasing: bytes[row.nameRange]))
            json.raw(",\"recordType\":")
            json.string(utf8: UnsafeRawBufferPointer(rebasing: bytes[row.typeRange]))
            json.raw(tail)
        }
        entries.append(.line(end: json.bytes.count))
        return row.sequence
    }
}
