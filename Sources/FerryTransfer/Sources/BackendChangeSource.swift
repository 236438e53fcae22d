import FerryBackend
import FerryCore
import FerryRecords
import Foundation
import Synchronization

/// The live records of any backend as a copy's source, read through the backend contract.
///
/// Zone by zone (the default zone first), each zone in change order (parents first when they were written parents
/// first), with their change tags and times; assets streamed from the backend. A backend that can be read as of one
/// moment (``SnapshotReading``) is, so the copy is consistent across zones whatever other writers do meanwhile.
///
/// From a ``FeedPosition`` (`--since`), only what changed after it is read, deletions included; zones the position
/// does not name are read from their start.
///
/// Read on a thread outside the cooperative pool (a copy's reading thread): each page of the change feed is a request
/// the thread waits for.
public final class BackendChangeSource: ChangeSource {
    let store: any RecordStore
    let kindName: String
    let provider: BackendAssetProvider
    let pageSize: Int
    let linePageSize: Int
    /// The zones and their tokens when the source was opened: what identifies its content.
    private let zones: [ZoneToken]
    /// The live records of those zones, when they were counted.
    private let recordCount: Int?
    /// Where reading starts, zone by zone (`nil`: every live record).
    let since: FeedPosition?
    /// The identity of the store's feed, which the positions it prints carry.
    private let identity: String?

    /// Reads from `store` (a snapshot of it when it can take one).
    ///
    /// `kind` names it in bundle manifests (`local`, `postgres`); with `since`, only what changed after that position;
    /// `pageSize` changes a page at a time, `linePageSize` when read as lines (which are written as their rows arrive,
    /// so no page's rows are held whole). With `counting`, the zones' records are counted for ``expectedChanges`` (for
    /// a progress display: a count may read every record).
    public static func open(
        _ store: any RecordStore, kind: String, since: FeedPosition? = nil, pageSize: Int = 2000, linePageSize: Int = 10000,
        counting: Bool = true
    ) async throws
        -> BackendChangeSource
    {
        let snapshot = try await (store as? any SnapshotReading)?.snapshot()
        let reader = snapshot ?? store
        let identity = try await reader.feedIdentity()
        // A position read from another store would read from the wrong places in this one's feed (zone numbers and
        // sequences are the store's own), leaving out what changed: refused where both carry an identity.
        if let wanted = since?.source, let identity, wanted != identity {
            try? await snapshot?.close()
            throw BackendError(
                .invalidToken,
                "\(store.name): the position given to --since was printed by a copy from another store (\(wanted), this one is \(identity)); "
                    + "copy without --since, or give the position a copy from this one printed")
        }
        let zones: [ZoneToken]
        var recordCount: Int?
        if counting {
            let counted = try await reader.zones()
            zones = counted.map { ZoneToken(zoneID: $0.zoneID, syncToken: $0.syncToken) }
            recordCount = counted.reduce(0) { $0 + $1.recordCount }
        } else {
            zones = try await reader.zoneTokens()
        }
        return BackendChangeSource(
            store: reader, kind: kind, since: since, pageSize: pageSize, linePageSize: linePageSize, zones: zones, recordCount: recordCount,
            identity: identity)
    }

    private init(
        store: any RecordStore, kind: String, since: FeedPosition?, pageSize: Int, linePageSize: Int, zones: [ZoneToken], recordCount: Int?,
        identity: String?
    ) {
        self.store = store
        kindName = kind
        self.identity = identity
        self.since = since
        self.pageSize = pageSize
        self.linePageSize = linePageSize
        provider = BackendAssetProvider(store: store)
        self.zones = zones
        self.recordCount = recordCount
    }

    /// Where this read ends: every zone's token as the source was opened.
    public var feedPosition: FeedPosition? {
        var tokens: [ZoneID: SyncToken] = [:]
        for zone in zones { if let token = zone.syncToken { tokens[zone.zoneID] = token } }
        return FeedPosition(tokens: tokens, source: identity)
    }

    public var kind: String { kindName }
    public var description: String { URL(fileURLWithPath: store.name).lastPathComponent }
    public var assets: (any AssetProvider)? { provider }
    /// The live records counted when the source was opened (`nil` when they were not, or when reading from a position).
    public var expectedChanges: Int? { since == nil ? recordCount : nil }

    public var fingerprint: String {
        "\(kindName)|\(store.name)|" + zones.map { "\($0.zoneID)=\($0.syncToken?.text ?? "")" }.joined(separator: ",")
            + (since.map { "|since=\($0)" } ?? "")
    }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        try forEachBatch { batch in
            for index in batch.indices { try body(batch[index]) }
        }
    }

    /// A page of the feed at a time; the next page is asked for while this one is handed on, so the backend and the
    /// copy work at once.
    public func forEachBatch(_ body: ([SourceChange]) throws -> Void) throws {
        let (label, since) = (description, self.since)
        let store = self.store
        try forEachPage(of: pageSize, { zone, token, limit in try await store.changes(in: zone, since: token, limit: limit) }) { changes, _ in
            var batch: [SourceChange] = []
            batch.reserveCapacity(changes.changes.count)
            for change in changes.changes {
                switch change {
                case .record(let record):
                    batch.append(SourceChange(.record(record), origin: "\(label) \(record.zoneID.zoneName)"))
                case .deletion(let deletion) where since != nil:
                    // Read from a position: a record deleted since then is a deletion to copy.
                    batch.append(SourceChange(.deletion(deletion), origin: "\(label) \(deletion.zoneID.zoneName)"))
                case .deletion:
                    // A full read copies what is live; a tombstone is no record.
                    continue
                }
            }
            if !batch.isEmpty { try body(batch) }
        }
    }

    /// Every zone's feed, page by page in order, each asked for while the one before is handed on.
    private func forEachPage<Page: FeedPage>(
        of pageSize: Int, _ read: @escaping @Sendable (ZoneID, SyncToken?, Int) async throws -> Page,
        _ body: (Page, ZoneID) throws -> Void
    ) throws {
        let since = self.since
        func ask(_ zone: ZoneID, from token: SyncToken?) -> Task<Page, any Error> {
            Task { try await read(zone, token, pageSize) }
        }
        var next: Task<Page, any Error>? = zones.first.map { ask($0.zoneID, from: since?.tokens[$0.zoneID]) }
        defer { next?.cancel() }
        for (position, zone) in zones.enumerated() {
            while let asked = next {
                let page: Page
                do {
                    page = try AsyncBridge.wait { try await asked.value }
                } catch let error as BackendError where error.code == .invalidToken && since != nil {
                    let part = since?.tokens[zone.zoneID].map { " (its part for zone \(zone.zoneID.zoneName), \($0.text), is not this zone's)" } ?? ""
                    throw BackendError(
                        .invalidToken,
                        "\(store.name): the position given to --since was not printed by a copy from this database\(part); copy without --since, "
                            + "or give the position a copy from it printed")
                }
                if page.moreComing {
                    next = ask(zone.zoneID, from: page.syncToken)
                } else {
                    next = position + 1 < zones.count ? ask(zones[position + 1].zoneID, from: since?.tokens[zones[position + 1].zoneID]) : nil
                }
                try body(page, zone.zoneID)
                if !page.moreComing { break }
            }
        }
    }
}

extension BackendChangeSource: LineChangeSource {
    /// Whether the backend reads its feed as lines (``LineReading``).
    public var readsLines: Bool { store is any LineReading }

    public func forEachLinePage(_ body: (ChangeLines) throws -> Void) throws {
        guard let lines = store as? any LineReading else {
            throw BackendError(.invalidRequest, "\(description): this backend does not read its change feed as lines")
        }
        let (label, since) = (description, self.since)
        try forEachPage(
            of: linePageSize, { zone, token, limit in try await lines.changeLines(in: zone, since: token, limit: limit) }
        ) { page, zone in
            // A full read copies what is live; from a position, a record deleted since then is a deletion to copy.
            func isDeletion(_ entry: LinePage.Entry) -> Bool { if case .deletion = entry { true } else { false } }
            var page = page
            if since == nil, page.entries.contains(where: isDeletion) { page.entries.removeAll(where: isDeletion) }
            if !page.entries.isEmpty { try body(ChangeLines(page, origin: "\(label) \(zone.zoneName)")) }
        }
    }
}

/// What the reading loop needs of a page of a zone's feed, records or lines.
protocol FeedPage: Sendable {
    var syncToken: SyncToken { get }
    var moreComing: Bool { get }
}

extension ChangePage: FeedPage {}
extension LinePage: FeedPage {}

/// A backend's assets for a writer that reads them synchronously (a bundle writer's threads): each piece is a request
/// the reading thread waits for.
final class BackendAssetProvider: FetchingAssetProvider {
    let store: any RecordStore

    init(store: any RecordStore) { self.store = store }

    func canProvide(_ asset: Asset) throws -> Bool {
        let store = self.store
        return try AsyncBridge.wait { try await store.missingAssets([asset]).isEmpty }
    }

    func open(_ asset: Asset) throws -> any AssetReading {
        let store = self.store
        let bytes = try AsyncBridge.wait { try await store.assetBytes(asset) }
        return BackendAssetReader(bytes: bytes, asset: asset, source: store.name)
    }
}

/// Reads an asset's streamed pieces synchronously, checking its size and digest at the end.
final class BackendAssetReader: AssetReading, BufferReading {
    private let iterator: Pieces
    private let asset: Asset
    /// The backend, as errors name it.
    private let source: String
    private var pending = PendingPiece()
    private var hasher = SHA256Hasher()
    private var total: Int64 = 0

    /// The stream's iterator, advanced by one waiting thread at a time.
    private final class Pieces: @unchecked Sendable {
        // @unchecked: only the reader's thread advances it, one `next()` at a time, through AsyncBridge.wait.
        var iterator: AssetBytes.AsyncIterator
        init(_ bytes: AssetBytes) { iterator = bytes.makeAsyncIterator() }
        func next() async throws -> [UInt8]? { try await iterator.next() }
    }

    init(bytes: AssetBytes, asset: Asset, source: String) {
        iterator = Pieces(bytes)
        self.asset = asset
        self.source = source
    }

    /// Its bytes are hashed as they are read and checked against the asset by ``finish()``, which a writer calls
    /// after the last byte: a writer need not hash them again.
    var isVerified: Bool { true }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        // An empty piece is no end: the next one is fetched.
        while pending.isEmpty {
            let pieces = iterator
            guard let next = try AsyncBridge.wait({ try await pieces.next() }) else { return 0 }
            pending.refill(next)
            hasher.update(next)
            total += Int64(next.count)
        }
        return pending.copy(into: buffer)
    }

    func finish() throws {
        guard total == asset.size, hasher.finalize() == asset.sha256 else {
            throw BackendError(
                .damaged,
                "\(source): asset \(asset.sha256): the backend gave \(total) bytes that do not hash to it (expected \(asset.size)); the source is "
                    + "damaged: check it with ferry verify")
        }
    }
}
