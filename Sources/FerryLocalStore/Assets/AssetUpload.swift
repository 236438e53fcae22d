import FerryCore
import FerryRecords
import Foundation
import GRDB

/// Streams one asset into a local store in 1 MiB chunks, each committed on its own.
///
/// For sources that push bytes (a bundle being read). The asset counts as stored only when ``finish(size:)`` verified its digest; chunks of an
/// interrupted upload are replaced by the next one.
public final class AssetUpload {
    let store: LocalStore
    let digest: SHA256Digest
    private var buffer: [UInt8] = []
    private var chunk = 0
    private var total: Int64 = 0
    private var hasher = SHA256Hasher()

    /// Begins storing the asset with this digest (its old partial chunks are dropped).
    public init(store: LocalStore, digest: SHA256Digest) throws {
        self.store = store
        self.digest = digest
        buffer.reserveCapacity(LocalStoreBatch.chunkSize)
        let key = Data(digest.bytes)
        try store.write { batch in try batch.db.execute(sql: "DELETE FROM asset_chunks WHERE sha256 = ?", arguments: [key]) }
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
            try batch.db.execute(sql: "INSERT INTO asset_chunks(sha256, n, bytes) VALUES (?, ?, ?)", arguments: [key, index, data])
        }
        chunk += 1
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes the last chunk, checks the digest and marks the asset stored.
    public func finish() throws {
        try flush()
        guard hasher.finalize() == digest else {
            throw LocalStoreError(.damaged, "asset \(digest): the bytes received do not hash to it; the source is damaged")
        }
        let (key, size, chunks) = (Data(digest.bytes), total, chunk)
        try store.write { batch in
            try batch.db.execute(sql: "INSERT OR REPLACE INTO assets(sha256, size, chunks) VALUES (?, ?, ?)", arguments: [key, size, chunks])
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
