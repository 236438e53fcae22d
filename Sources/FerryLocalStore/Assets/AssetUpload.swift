import FerryCore
import FerryRecords
import Foundation
import GRDB

/// Streams one asset into a local store in 1 MiB chunks, each committed on its own.
///
/// For sources that push bytes (a bundle being read). The asset counts as stored only when ``finish()`` verified its
/// digest and found every chunk. Uploads of one asset may run side by side (copies into one store, parallel requests
/// carrying the same photo): the bytes of a digest are the same whoever sends them, so each writes (or rewrites) the
/// same chunks, the first to finish publishes the asset, and no chunk of a published asset is written again. Chunks of
/// an interrupted upload are rewritten by the next one; chunks past the asset's end are dropped when it is published.
public final class AssetUpload {
    let store: LocalStore
    let digest: SHA256Digest
    private var buffer: [UInt8] = []
    private var chunk = 0
    private var total: Int64 = 0
    private var hasher = SHA256Hasher()

    /// Begins storing the asset with this digest.
    public init(store: LocalStore, digest: SHA256Digest) throws {
        self.store = store
        self.digest = digest
        buffer.reserveCapacity(LocalStoreBatch.chunkSize)
    }

    /// Appends bytes.
    package func append(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes[...]
        while !rest.isEmpty {
            let take = min(rest.count, LocalStoreBatch.chunkSize - buffer.count)
            buffer.append(contentsOf: rest.prefix(take))
            rest = rest.dropFirst(take)
            if buffer.count == LocalStoreBatch.chunkSize { try flush() }
        }
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        hasher.update(buffer)
        total += Int64(buffer.count)
        let (key, index, data) = (Data(digest.bytes), chunk, Data(buffer))
        try store.write { batch in
            try batch.db.execute(
                sql:
                    "INSERT OR REPLACE INTO asset_chunks(sha256, n, bytes) SELECT ?1, ?2, ?3 WHERE NOT EXISTS (SELECT 1 FROM assets WHERE sha256 = ?1)",
                arguments: [key, index, data])
        }
        chunk += 1
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes the last chunk, checks the digest and marks the asset stored.
    /// - Returns: whether this upload stored it (`false`: another upload of the same asset finished first).
    @discardableResult
    public func finish() throws -> Bool {
        try flush()
        guard hasher.finalize() == digest else {
            throw LocalStoreError(.damaged, "asset \(digest): the bytes received do not hash to it; the source is damaged")
        }
        let (key, size, chunks) = (Data(digest.bytes), total, chunk)
        return try store.write { batch in
            if try Int64.fetchOne(batch.db, sql: "SELECT size FROM assets WHERE sha256 = ?", arguments: [key]) != nil { return false }
            let held = try Int.fetchOne(batch.db, sql: "SELECT count(*) FROM asset_chunks WHERE sha256 = ? AND n < ?", arguments: [key, chunks]) ?? 0
            guard held == chunks else {
                throw LocalStoreError(
                    .damaged, "asset \(digest): \(held) of its \(chunks) chunks are in the store after the upload; copy it again")
            }
            try batch.db.execute(sql: "DELETE FROM asset_chunks WHERE sha256 = ? AND n >= ?", arguments: [key, chunks])
            try batch.db.execute(sql: "INSERT INTO assets(sha256, size, chunks) VALUES (?, ?, ?)", arguments: [key, size, chunks])
            return true
        }
    }
}

extension LocalStore {
    /// Whether the store holds an asset with this digest (any size).
    public func hasAsset(_ digest: SHA256Digest) -> Bool {
        let key = Data(digest.bytes)
        return ((try? read { db in try Int64.fetchOne(db, sql: "SELECT size FROM assets WHERE sha256 = ?", arguments: [key]) }) ?? nil) != nil
    }
}
