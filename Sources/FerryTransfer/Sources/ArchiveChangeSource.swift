import FerryCore
import FerryMapping
import FerryRecords
import Foundation

/// The objects of a plist or NSKeyedArchiver cache, mapped to records (see ``ArchiveCacheMapper``).
public final class ArchiveChangeSource: ChangeSource {
    let mapper: ArchiveCacheMapper
    let storeAssets: StoreAssets
    let path: String
    let options: ArchiveCacheMapper.Options

    /// Reads a cache file.
    public init(path: String, options: ArchiveCacheMapper.Options, temporaryDirectory: String? = nil) throws {
        self.path = path
        self.options = options
        storeAssets = try StoreAssets(temporaryDirectory: temporaryDirectory)
        mapper = try ArchiveCacheMapper(path: path, options: options, assets: storeAssets)
    }

    public var kind: String { "archive" }
    public var description: String { URL(fileURLWithPath: path).lastPathComponent }
    public var assets: (any AssetProvider)? { storeAssets }

    public var fingerprint: String {
        "archive|\(mapper.digest)|\(options.recordType ?? "")|\(options.separator)|\(options.zone ?? "")|\(options.pendingOnly)|\(options.nameProperty ?? "")|\(options.statusProperty)"
    }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        try mapper.run { mapped in try body(SourceChange(mapped.change, origin: mapped.origin, problems: mapped.problems)) }
    }
}
