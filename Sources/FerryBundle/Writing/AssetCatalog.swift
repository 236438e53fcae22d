import FerryCore
import FerryRecords
import FerrySorting

/// The assets of the records a bundle writer admitted, each once, in bounded memory: the recent ones in a small table
/// (so the asset source is asked about each asset once, mostly), all of them in an ``ExternalSorter`` that becomes the
/// bundle's sorted asset list at the end.
final class AssetCatalog {
    private var recent: [SHA256Digest: Int64] = [:]
    private let sorter: ExternalSorter<AssetEntry>
    private let temporaryDirectory: String?

    /// How many assets the table of recent ones holds before it starts again.
    static let recentLimit = 1 << 16

    /// An empty catalog keeping at most about `memoryLimit` bytes of entries in memory (scratch files go under
    /// `temporaryDirectory`, default `$TMPDIR`).
    init(memoryLimit: Int, temporaryDirectory: String?) {
        self.temporaryDirectory = temporaryDirectory
        sorter = ExternalSorter(memoryLimit: memoryLimit, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory)
    }

    private static let scratchPrefix = "ferry-asset-list"

    /// The size an asset was admitted with, if it was admitted lately (`nil` says nothing).
    func recentSize(of digest: SHA256Digest) -> Int64? { recent[digest] }

    /// Adds an admitted asset.
    /// - Returns: whether it was not among the recent ones (it may have been added long ago).
    /// - Throws: ``CoreError`` when a scratch file cannot be written.
    @discardableResult
    func add(_ asset: Asset) throws -> Bool {
        guard recent[asset.sha256] == nil else { return false }
        if recent.count == Self.recentLimit { recent.removeAll(keepingCapacity: true) }
        recent[asset.sha256] = asset.size
        try sorter.append(AssetEntry(digest: asset.sha256, size: asset.size))
        return true
    }

    /// Forgets every asset.
    func reset() {
        recent = [:]
        sorter.reset()
    }

    /// The assets, sorted by digest, each once, and their total size; the catalog is empty afterwards.
    /// - Throws: ``BundleError`` (`writeFailed`) for an asset admitted with two sizes (an asset source that did not
    ///   check sizes), ``CoreError`` when a scratch file cannot be written or read.
    func finish() throws -> (list: ExternalSortedSet<AssetEntry>, bytes: Int64) {
        recent = [:]
        let list = try ExternalSortedSet(taking: sorter, prefix: Self.scratchPrefix, temporaryDirectory: temporaryDirectory)
        var last: AssetEntry?
        var bytes: Int64 = 0
        try list.forEach { entry in
            if let last, last.digest == entry.digest {
                throw BundleError(.writeFailed, "asset \(entry.digest) was admitted as \(last.size) and as \(entry.size) bytes")
            }
            last = entry
            bytes += entry.size
        }
        return (list, bytes)
    }
}
