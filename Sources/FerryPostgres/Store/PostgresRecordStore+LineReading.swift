import FerryBackend
import FerryJSON
import FerryRecords
import Foundation
import NIOCore
import PostgresNIO

extension PostgresRecordStore: LineReading {
    /// A page of the change feed with each record written as a line around its `jsonb` fields' text, which is not
    /// decoded here: the system fields, name, type and zone in canonical order, the fields as the server wrote them.
    public func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> LinePage {
        let page = try await feedPage(in: zone, since: token, limit: limit)
        let (bytes, entries) = try Self.lines(page.rows, zone: zone, store: name)
        return LinePage(bytes: bytes, entries: entries, syncToken: page.syncToken, moreComing: page.moreComing)
    }

    /// The lines of a feed page's rows (the feed query's columns), one after another, and where each ends.
    private static func lines(_ rows: [PostgresRow], zone: ZoneID, store: String) throws -> ([UInt8], [LinePage.Entry]) {
        var zoneTail = JSONWriter(capacity: 96)
        zoneTail.raw(",\"zoneID\":{\"ownerRecordName\":")
        zoneTail.string(zone.ownerName)
        zoneTail.raw(",\"zoneName\":")
        zoneTail.string(zone.zoneName)
        zoneTail.raw("}}")
        let tail = zoneTail.bytes
        var json = JSONWriter(capacity: rows.count * 512)
        var entries: [LinePage.Entry] = []
        entries.reserveCapacity(rows.count)
        for row in rows {
            var cells = row.makeIterator()
            func next() throws -> PostgresCell {
                guard let cell = cells.next() else { throw BackendError(.damaged, "\(store): a feed row has too few columns") }
                return cell
            }
            let recordName = try next().decode(String.self)
            let type = try next().decode(String.self)
            let tag = try next().decode(String.self)
            _ = try next()  // the change sequence, which the page's last row gave already
            let created = try next().decode(Date.self)
            let modified = try next().decode(Date.self)
            if try next().decode(Bool.self) {
                entries.append(.deletion(Deletion(recordType: type, recordName: recordName, zoneID: zone)))
                continue
            }
            guard let fields = try next().bytes else {
                throw BackendError(
                    .damaged,
                    "\(store): the fields of record \(recordName) in \(zone) do not decode as CloudKit JSON (they are NULL); verify the database")
            }
            json.raw("{\"created\":{\"timestamp\":")
            json.integer(milliseconds(created))
            json.raw("},\"fields\":")
            fields.withUnsafeReadableBytes { json.raw($0) }
            json.raw(",\"modified\":{\"timestamp\":")
            json.integer(milliseconds(modified))
            json.raw("},\"recordChangeTag\":")
            json.string(tag)
            json.raw(",\"recordName\":")
            json.string(recordName)
            json.raw(",\"recordType\":")
            json.string(type)
            json.raw(tail)
            entries.append(.line(end: json.bytes.count))
        }
        return (json.bytes, entries)
    }
}
