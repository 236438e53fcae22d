import FerryLocalStore
import FerryRecords
import Foundation

/// The live records of a local store, zone by zone, each zone in change order (parents first when they were
/// written parents first), with their change tags and times.
public final class LocalStoreChangeSource: ChangeSource {
    public let store: LocalStore
    let provider: LocalStoreAssets

    /// Reads from an open local store.
    public init(store: LocalStore) {
        self.store = store
        provider = LocalStoreAssets(store: store)
    }

    public var kind: String { "local" }
    public var description: String { URL(fileURLWithPath: store.path).lastPathComponent }
    public var assets: (any AssetProvider)? { provider }

    public var fingerprint: String {
        let tokens = (try? store.zones().map { "\($0.zoneID)=\($0.syncToken)" }.joined(separator: ",")) ?? ""
        return "local|\(store.storeID)|\(tokens)"
    }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        try store.forEachRecord { record in
            try body(SourceChange(.record(record), origin: "\(description) \(record.zoneID.zoneName)"))
        }
    }
}
