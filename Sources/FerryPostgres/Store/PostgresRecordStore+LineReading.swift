import FerryBackend
import FerryJSON
import FerryRecords
import Foundation
import NIOCore
import PostgresNIO

extension PostgresRecordStore: LineReading {
    /// A page of the change feed with each record written as a line around its `jsonb` fields' text.
    ///
    /// The fields are not decoded here: the system fields, name, type and zone are written in canonical order, the
    /// fields as the server wrote them, each row as it arrives.
    public func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> LinePage {
        let store = name
        let page = try await feedPage(in: zone, since: token, limit: limit, kind: "lines", into: FeedLines(zone: zone, rows: limit)) {
            lines, row in try lines.append(row, store: store)
        }
        return LinePage(bytes: page.content.json.bytes, entries: page.content.entries, syncToken: page.syncToken, moreComing: page.moreComing)
    }
}

/// The lines of a page of a zone's feed, written row by row (the feed query's columns).
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

    /// Writes a row's line, or notes its tombstone.
    mutating func append(_ row: PostgresRow, store: String) throws {
        var cells = row.makeIterator()
        func next() throws -> PostgresCell {
            guard let cell = cells.next() else { throw BackendError(.damaged, "\(store): a feed row has too few columns") }
            return cell
        }
        let recordName = try next().decode(String.self)
        let type = try next().decode(String.self)
        let tag = try next().decode(String.self)
        _ = try next()  // the change sequence, which the page's last row gives
        let created = try next().decode(Date.self)
        let modified = try next().decode(Date.self)
        if try next().decode(Bool.self) {
            entries.append(.deletion(Deletion(recordType: type, recordName: recordName, zoneID: zone)))
            return
        }
        guard let fields = try next().bytes else {
            throw BackendError(
                .damaged,
                "\(store): the fields of record \(recordName) in \(zone) do not decode as CloudKit JSON (they are NULL); verify the database")
        }
        json.raw("{\"created\":{\"timestamp\":")
        json.integer(PostgresRecordStore.milliseconds(created))
        json.raw("},\"fields\":")
        fields.withUnsafeReadableBytes { json.raw($0) }
        json.raw(",\"modified\":{\"timestamp\":")
        json.integer(PostgresRecordStore.milliseconds(modified))
        json.raw("},\"recordChangeTag\":")
        json.string(tag)
        json.raw(",\"recordName\":")
        json.string(recordName)
        json.raw(",\"recordType\":")
        json.string(type)
        json.raw(tail)
        entries.append(.line(end: json.bytes.count))
    }
}
