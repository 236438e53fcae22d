import FerryCore
import FerryRecords
import FerrySorting
import Foundation
import GRDB

extension LocalStore {
    /// The number of asset chunks the store holds, complete assets' and unfinished uploads' (any asset stored
    /// changes it).
    public func assetChunkCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM asset_chunks") ?? 0 }
    }

    /// The assets no live record uses, and their bytes.
    ///
    /// They are left by a copy that stored a source's assets and then failed before the records that use them were
    /// written. `digests` lists the complete ones; `count` and `bytes` also count the chunks of uploads that never
    /// finished.
    ///
    /// Every live record's body is read (its asset fields), and the digests they use are sorted in bounded memory in
    /// scratch files under `temporaryDirectory` into a set the store's asset table is looked up in.
    public func unreferencedAssets(temporaryDirectory: String? = nil) throws -> (count: Int, bytes: Int64, digests: [SHA256Digest]) {
        let used = ExternalSorter<SHA256Digest>(prefix: "ferry-used-assets", temporaryDirectory: temporaryDirectory)
        let decoder = CloudKitJSONDecoder()
        try read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT body FROM records WHERE deleted = 0 AND body IS NOT NULL AND instr(body, 'ASSET') > 0")
            while let row = try rows.next() {
                guard let body = row[0] as Data?, case .record(let record) = try? decoder.decode(bytes: Array(body)) else { continue }
                for field in record.fields { for asset in field.value.assets { try used.append(asset.sha256) } }
            }
        }
        let usedSet = try ExternalSortedSet(taking: used, prefix: "ferry-used-assets", temporaryDirectory: temporaryDirectory)
        var unused: [SHA256Digest] = []
        var bytes: Int64 = 0
        try read { db in
            // In digest order, as the used set is: its lookups then read its blocks in order.
            let assets = try Row.fetchCursor(db, sql: "SELECT sha256, size FROM assets ORDER BY sha256")
            while let row = try assets.next() {
                guard let key = row[0] as Data?, let digest = SHA256Digest(bytes: key), try !usedSet.contains(digest) else { continue }
                unused.append(digest)
                bytes += row[1] as Int64? ?? 0
            }
        }
        // Chunks of uploads that never finished (no asset row) are unreferenced too.
        let partial = try read { db in
            try Row.fetchOne(
                db,
                sql:
                    "SELECT count(DISTINCT sha256), coalesce(sum(length(bytes)), 0) FROM asset_chunks WHERE sha256 NOT IN (SELECT sha256 FROM assets)"
            )
        }
        let partialCount = partial.flatMap { $0[0] as Int? } ?? 0
        let partialBytes = partial.flatMap { $0[1] as Int64? } ?? 0
        return (unused.count + partialCount, bytes + partialBytes, unused)
    }

    /// Removes the assets no live record uses (see ``unreferencedAssets(temporaryDirectory:)``), in one transaction.
    /// - Returns: how many were removed, and their bytes.
    @discardableResult
    public func removeUnreferencedAssets(temporaryDirectory: String? = nil) throws -> (count: Int, bytes: Int64) {
        let found = try unreferencedAssets(temporaryDirectory: temporaryDirectory)
        guard found.count > 0 else { return (0, 0) }
        try write { batch in
            try batch.db.execute(sql: "DELETE FROM asset_chunks WHERE sha256 NOT IN (SELECT sha256 FROM assets)")
            for digest in found.digests {
                let key = Data(digest.bytes)
                try batch.db.execute(sql: "DELETE FROM asset_chunks WHERE sha256 = ?", arguments: [key])
                try batch.db.execute(sql: "DELETE FROM assets WHERE sha256 = ?", arguments: [key])
            }
        }
        return (found.count, found.bytes)
    }
}

extension LocalStore {
    /// What SQLite's `PRAGMA quick_check` (with `full`, `integrity_check`, which also compares every index with its
    /// table) finds wrong with the store's file (empty when nothing), at most `limit`.
    public func integrityProblems(limit: Int = 100, full: Bool = false) throws -> [String] {
        try read { db in
            let found = try String.fetchAll(db, sql: "PRAGMA \(full ? "integrity_check" : "quick_check")(\(max(1, limit)))")
            return found == ["ok"] ? [] : found
        }
    }

    /// Removes unreferenced assets, then (with `compact`) rewrites the file without its free pages (SQLite's
    /// `VACUUM`, which needs as much free disk as the store), so that the space goes back to the filesystem.
    /// - Returns: the assets removed, their bytes, and the file's size before and after.
    public func vacuum(compact: Bool, temporaryDirectory: String? = nil) throws -> (
        assets: Int, assetBytes: Int64, sizeBefore: Int64, sizeAfter: Int64
    ) {
        let before = Self.fileSize(path)
        let removed = try removeUnreferencedAssets(temporaryDirectory: temporaryDirectory)
        if compact {
            do {
                try database.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM")
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
            } catch let error as DatabaseError {
                throw LocalStoreError(
                    .damaged, "\(path): compacting failed: \(error.message ?? "\(error.resultCode)"); the store is as it was", cause: error)
            }
        }
        return (removed.count, removed.bytes, before, Self.fileSize(path))
    }

    private static func fileSize(_ path: String) -> Int64 {
        ["", "-wal"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int).map { Int64($0) } ?? 0)
        }
    }
}
