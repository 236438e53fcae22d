import GRDB

/// Where an interrupted copy into the store got to: committed in the same transaction as the records it counts.
public struct CopyCheckpoint: Sendable, Hashable {
    /// Changes of the source already applied, in the source's order.
    public var done: Int64
    /// Whether the copy ran to its end.
    public var finished: Bool

    /// Creates a checkpoint.
    public init(done: Int64, finished: Bool) {
        self.done = done
        self.finished = finished
    }
}

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
