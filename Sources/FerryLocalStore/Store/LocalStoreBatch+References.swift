import FerryCore
import FerryRecords
import Foundation
import GRDB
import GRDBSQLite

/// The `refs` table: one row per (zone, DELETE_SELF target, source record), searched by target when a record is
/// deleted, to delete the records that point at it.
///
/// It has no index by source: a second random-order index on every reference a copy writes cost a fifth of a large
/// copy into a local store, while replacing and deleting records, which need a record's own rows, are rarer and read
/// them from the record's stored body.
extension LocalStoreBatch {
    /// Brings a record's rows in `refs` from the targets it had to the ones it has now.
    func replaceReferences(zone: Int64, source: String, old: [String], new: [String]) throws {
        for target in old where !new.contains(target) {
            try db.cachedStatement(sql: "DELETE FROM refs WHERE zone = ? AND target = ? AND source = ?").execute(arguments: [zone, target, source])
        }
        for target in new where !old.contains(target) {
            let statement = try statement(\.reference, sql: "INSERT OR IGNORE INTO refs(zone, target, source) VALUES (?, ?, ?)")
            try execute(statement) { handle in
                var code = sqlite3_bind_int64(handle, 1, zone)
                if code == SQLITE_OK { code = Self.bind(handle, 2, text: target) }
                if code == SQLITE_OK { code = Self.bind(handle, 3, text: source) }
                return code
            }
        }
    }

    /// The distinct targets of a record's DELETE_SELF references, in the order they first appear: its rows in `refs`.
    static func deleteSelfTargets(of record: Record) -> [String] {
        var targets: [String] = []
        record.forEachDeleteSelfReference { _, reference in
            if !targets.contains(reference.recordName) { targets.append(reference.recordName) }
        }
        return targets
    }

    /// The DELETE_SELF targets of the live record stored under a name (none for a tombstone or no record), read from
    /// its stored body.
    func storedDeleteSelfTargets(zone: Int64, name: String) throws -> [String] {
        guard
            let body = try Data.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM records WHERE zone = ? AND name = ?"), arguments: [zone, name])
        else { return [] }
        guard case .record(let record)? = try? CloudKitJSONDecoder().decode(bytes: Array(body)) else {
            throw LocalStoreError(.damaged, "\(store.path): record \(name) does not decode; restore the store from a bundle")
        }
        return Self.deleteSelfTargets(of: record)
    }
}
