import FerryBackend
import FerryRecords
import Foundation
import GRDB

extension LocalStoreBatch {
    /// The checkpoint of a copy run (a digest of its source and mapping), if one was recorded.
    public func checkpoint(run: String) throws -> CopyCheckpoint? {
        guard let row = try Row.fetchOne(db, sql: "SELECT done, finished FROM copy_journal WHERE run = ?", arguments: [run]) else { return nil }
        return CopyCheckpoint(done: row[0], finished: (row[1] as Int64) != 0)
    }

    /// Records how far a copy run got.
    public func setCheckpoint(run: String, source: String, _ checkpoint: CopyCheckpoint) throws {
        try db.execute(
            sql: """
                INSERT INTO copy_journal(run, done, finished, source) VALUES (?, ?, ?, ?)
                ON CONFLICT(run) DO UPDATE SET done = excluded.done, finished = excluded.finished, source = excluded.source
                """, arguments: [run, checkpoint.done, checkpoint.finished ? 1 : 0, source])
    }
}

extension LocalStoreBatch {
    /// Remembers a record to write again at the end of a copy run (its canonical JSON, system fields left out).
    public func deferRecord(_ record: Record, run: String) throws {
        var bare = record
        bare.system = nil
        let next = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) + 1 FROM copy_deferred WHERE run = ?", arguments: [run]) ?? 1
        try db.execute(sql: "INSERT INTO copy_deferred(run, seq, record) VALUES (?, ?, ?)", arguments: [run, next, Data(bare.canonicalJSON)])
    }

    /// The records a run deferred, in order; they are removed from the journal.
    public func takeDeferred(run: String) throws -> [Record] {
        let rows = try Data.fetchAll(db, sql: "SELECT record FROM copy_deferred WHERE run = ? ORDER BY seq", arguments: [run])
        try db.execute(sql: "DELETE FROM copy_deferred WHERE run = ?", arguments: [run])
        return try rows.map { data in
            guard case .record(let record) = try? CloudKitJSONDecoder().decode(bytes: Array(data)) else {
                throw LocalStoreError(.damaged, "\(store.path): a deferred record of copy \(run) does not decode; run the copy again")
            }
            return record
        }
    }
}
