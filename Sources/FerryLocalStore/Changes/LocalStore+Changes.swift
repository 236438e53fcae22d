import FerryBackend
import FerryRecords
import Foundation
import GRDB

extension LocalStore {
    /// The changes in a zone since a token (all of them without one), at most `limit` per page, as CloudKit's
    /// `records/changes` gives them: each changed record once in its latest state, deletions as tombstones.
    /// - Throws: ``LocalStoreError`` `invalid-token` for a token another zone or store issued; `missing` for no zone.
    public func changes(in zone: ZoneID, since token: SyncToken?, limit: Int = 200) throws -> ChangePage {
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
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT name, type, tag, seq, created, modified, deleted, body FROM records WHERE zone = ? AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [number, after, limit + 1])
            var changes: [RecordChange] = []
            var last = after
            for row in rows.prefix(limit) {
                let name: String = row[0]
                let type: String = row[1]
                last = row[3]
                if (row[6] as Int64) != 0 {
                    changes.append(.deletion(Deletion(recordType: type, recordName: name, zoneID: zone)))
                    continue
                }
                let state = StoredRecord(
                    recordType: type, changeTag: row[2], isDeleted: false, contentDigest: nil, created: row[4], modified: row[5])
                let id = RecordID(recordName: name, zoneID: zone)
                changes.append(.record(try state.record(body: (row[7] as Data?).map { Array($0) }, id: id, storePath: path)))
            }
            let moreComing = rows.count > limit
            if !moreComing { last = max(last, try Int64.fetchOne(db, sql: "SELECT last_seq FROM zones WHERE id = ?", arguments: [number]) ?? last) }
            return ChangePage(changes: changes, syncToken: SyncToken(FeedPosition(zone: number, sequence: last).text), moreComing: moreComing)
        }
    }
}
