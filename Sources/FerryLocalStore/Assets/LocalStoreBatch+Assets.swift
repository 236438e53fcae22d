import FerryCore
import FerryRecords
import Foundation
import GRDB

extension LocalStoreBatch {
    /// The size of the chunks assets are stored in.
    static let chunkSize = 1 << 20

    /// Whether the store holds the asset's bytes.
    public func hasAsset(_ asset: Asset) throws -> Bool {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT size FROM assets WHERE sha256 = ?"), arguments: [Data(asset.sha256.bytes)]) == asset.size
    }

    /// Stores an asset's bytes from a provider, once: checks the bytes hash to the asset's digest as they stream.
    /// - Returns: whether it was new.
    @discardableResult
    public func storeAsset(_ asset: Asset, from provider: any AssetProvider) throws -> Bool {
        if try hasAsset(asset) { return false }
        let key = Data(asset.sha256.bytes)
        try db.execute(sql: "DELETE FROM asset_chunks WHERE sha256 = ?", arguments: [key])
        let reader = try provider.open(asset)
        var hasher = SHA256Hasher()
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        var chunk = 0
        var total: Int64 = 0
        while true {
            let filled = try buffer.withUnsafeMutableBytes { try reader.read(filling: $0) }
            if filled == 0 { break }
            let bytes = buffer[..<filled]
            hasher.update(bytes)
            total += Int64(filled)
            try db.execute(sql: "INSERT INTO asset_chunks(sha256, n, bytes) VALUES (?, ?, ?)", arguments: [key, chunk, Data(bytes)])
            chunk += 1
            if filled < buffer.count { break }
        }
        try reader.finish()
        guard total == asset.size, hasher.finalize() == asset.sha256 else {
            throw LocalStoreError(
                .damaged,
                "asset \(asset.sha256): the source gave \(total) bytes that do not hash to it (expected \(asset.size)); the source changed or is damaged"
            )
        }
        try db.execute(sql: "INSERT INTO assets(sha256, size, chunks) VALUES (?, ?, ?)", arguments: [key, total, chunk])
        return true
    }
}

/// A local store's assets, for writers that copy out of it (a bundle).
public final class LocalStoreAssets: AssetProvider, @unchecked Sendable {
    let store: LocalStore

    /// Reads assets from `store`.
    public init(store: LocalStore) { self.store = store }

    public func canProvide(_ asset: Asset) -> Bool {
        (try? store.read { db in
            try Int64.fetchOne(db, sql: "SELECT size FROM assets WHERE sha256 = ?", arguments: [Data(asset.sha256.bytes)])
        }) == asset.size
    }

    public func open(_ asset: Asset) throws -> any AssetReading {
        LocalAssetReader(store: store, asset: asset)
    }
}

/// Reads an asset chunk by chunk, one short read transaction per chunk.
final class LocalAssetReader: AssetReading, BufferReading {
    let store: LocalStore
    let asset: Asset
    private var chunk = 0
    private var pending = PendingPiece()

    init(store: LocalStore, asset: Asset) {
        self.store = store
        self.asset = asset
    }

    /// The store checked the digest when the asset came in.
    var isVerified: Bool { true }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while pending.isEmpty {
            let key = Data(asset.sha256.bytes)
            let index = chunk
            let next = try store.read { db in
                try Data.fetchOne(db, sql: "SELECT bytes FROM asset_chunks WHERE sha256 = ? AND n = ?", arguments: [key, index])
            }
            guard let next else { return 0 }
            pending.refill(Array(next))
            chunk += 1
        }
        return pending.copy(into: buffer)
    }

    func finish() throws {}
}
