import FerryBackend
import FerryJSON
import FerryRecords
import Foundation
import GRDB

extension LocalStore {
    /// The changes in a zone since a token (all of them without one), at most `limit` per page, as CloudKit's
    /// `records/changes` gives them: each changed record once in its latest state, deletions as tombstones.
    /// - Throws: ``LocalStoreError`` `invalid-token` for a token another zone or store issued; `missing` for no zone.
    public func changes(in zone: ZoneID, since token: SyncToken?, limit: Int = 200) throws -> ChangePage {
        let page = try feedRows(in: zone, since: token, limit: limit)
        var changes: [RecordChange] = []
        changes.reserveCapacity(page.rows.count)
        for row in page.rows {
            if let deletion = Self.tombstone(row, in: zone) {
                changes.append(.deletion(deletion))
                continue
            }
            let state = StoredRecord(recordType: row[1], changeTag: row[2], isDeleted: false, contentDigest: nil, created: row[4], modified: row[5])
            let id = RecordID(recordName: row[0], zoneID: zone)
            changes.append(.record(try state.record(body: (row[7] as Data?).map { Array($0) }, id: id, storePath: path)))
        }
        return ChangePage(changes: changes, syncToken: page.syncToken, moreComing: page.moreComing)
    }

    /// The changes of ``changes(in:since:limit:)`` with each record a line of CloudKit record JSON: its stored body
    /// (canonical JSON without system fields), not decoded, with its system fields written in.
    /// - Throws: as ``changes(in:since:limit:)``; ``LocalStoreError`` `damaged` for a body that is no JSON object.
    public func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int = 200) throws -> LinePage {
        let page = try feedRows(in: zone, since: token, limit: limit)
        var json = JSONWriter(capacity: page.rows.count * 512)
        var entries: [LinePage.Entry] = []
        entries.reserveCapacity(page.rows.count)
        for row in page.rows {
            if let deletion = Self.tombstone(row, in: zone) {
                entries.append(.deletion(deletion))
                continue
            }
            guard let body = row[7] as Data?, body.count >= 2, body.first == UInt8(ascii: "{"), body.last == UInt8(ascii: "}") else {
                throw LocalStoreError(
                    .damaged, "\(path): record \(row[0] as String) in zone \(zone) does not decode; restore the store from a bundle")
            }
            // The body's keys, then the system fields: a line's keys may come in any order.
            body.withUnsafeBytes { json.raw(UnsafeRawBufferPointer(rebasing: $0[..<($0.count - 1)])) }
            if body.count > 2 { json.byte(UInt8(ascii: ",")) }
            LinePage.writeSystemFields(tag: row[2], created: row[4], modified: row[5], into: &json)
            json.byte(UInt8(ascii: "}"))
            entries.append(.line(end: json.bytes.count))
        }
        return LinePage(bytes: json.bytes, entries: entries, syncToken: page.syncToken, moreComing: page.moreComing)
    }

    /// A feed row's tombstone, `nil` for a live record.
    private static func tombstone(_ row: Row, in zone: ZoneID) -> Deletion? {
        (row[6] as Int64) != 0 ? Deletion(recordType: row[1], recordName: row[0], zoneID: zone) : nil
    }

    /// The rows of a page of a zone's feed (`name, type, tag, seq, created, modified, deleted, body`), with the page's
    /// token and whether more changes follow.
    private func feedRows(in zone: ZoneID, since token: SyncToken?, limit: Int) throws -> (rows: [Row], syncToken: SyncToken, moreComing: Bool) {
        try read { db in
            guard
                let number = try Int64.fetchOne(
                    db, sql: "SELECT id FROM zones WHERE zone_name = ? AND owner_name = ?", arguments: [zone.zoneName, zone.ownerName])
            else {
                throw LocalStoreError(.missing, "\(path): no zone \(zone); zones are listed by ferry ls \(path)")
            }
            var after: Int64 = 0
            if let token {
                guard let parsed = FeedPosition(text: token.text), parsed.zone == number else {
                    throw LocalStoreError(.invalidToken, "\(path): sync token \(token) was not issued for zone \(zone); start without a token")
                }
                after = parsed.sequence
            }
            var rows = try Row.fetchAll(
                db,
                sql: "SELECT name, type, tag, seq, created, modified, deleted, body FROM records WHERE zone = ? AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [number, after, limit + 1])
            let moreComing = rows.count > limit
            if moreComing { rows.removeLast(rows.count - limit) }
            var last = rows.last.map { $0[3] as Int64 } ?? after
            if !moreComing { last = max(last, try Int64.fetchOne(db, sql: "SELECT last_seq FROM zones WHERE id = ?", arguments: [number]) ?? last) }
            return (rows, SyncToken(FeedPosition(zone: number, sequence: last).text), moreComing)
        }
    }
}
