import FerryBundle
import FerryCore
import Foundation
import GRDB

/// What a path given to `ferry copy` or `ferry diff` is.
public enum Endpoint: Sendable, Hashable {
    /// An archive bundle (`.tar.gz`, `.tar.zst`, `.zip`).
    case bundle(String)
    /// A Ferry local store.
    case localStore(String)
    /// A Core Data SQLite store.
    case coreData(String)
    /// A property list or NSKeyedArchiver cache of objects.
    case archiveCache(String)

    /// What the source is, for logs: `a bundle`, `a Core Data store`.
    public var kindDescription: String {
        switch self {
        case .bundle: "a bundle"
        case .localStore: "a Ferry local store"
        case .coreData: "a Core Data store"
        case .archiveCache: "a plist or keyed-archive cache"
        }
    }

    /// The path.
    public var path: String {
        switch self {
        case .bundle(let path), .localStore(let path), .coreData(let path), .archiveCache(let path): path
        }
    }

    /// Tells what an existing source is, without modifying it: bundles by extension, plists and keyed archives by
    /// their first bytes, SQLite files by their tables (a local store has `ferry_meta`), read with SQLite's
    /// `immutable` flag.
    public static func source(_ path: String) throws -> Endpoint {
        if ArchiveFormat(fileName: path) != nil { return .bundle(path) }
        guard FileManager.default.fileExists(atPath: path) else {
            throw CoreError(.fileNotFound, "\(path): no such file")
        }
        var header = [UInt8](repeating: 0, count: 16)
        let count = try header.withUnsafeMutableBytes { try InputFile(path: path).read(into: $0) }
        header.removeLast(16 - count)
        if header.starts(with: Array("bplist".utf8)) || header.starts(with: Array("<?xml".utf8)) || header.starts(with: Array("<plist".utf8)) {
            return .archiveCache(path)
        }
        guard header.starts(with: Array("SQLite format 3".utf8)) else {
            throw TransferError(
                .unknownSource,
                "\(path): not a bundle (.tar.gz, .tar.zst, .zip), a Core Data store, a Ferry local store or a plist / keyed-archive cache")
        }
        let tables = try? readOnlyTables(path)
        if tables?.contains("ferry_meta") == true { return .localStore(path) }
        return .coreData(path)
    }

    /// What `ferry copy` can write.
    public enum Target: Sendable, Hashable {
        case bundle(String)
        case localStore(String)
    }

    /// Tells what a target is: a bundle by its extension (`.tar.gz`, `.tgz`, `.tar.zst`, `.tzst`, `.zip`), a local
    /// store by `.ferry`, by being one already, or by being the default local store (`isDefault`, whatever its name).
    ///
    /// Any other name is refused rather than guessed: `x.tar.xz` or `x.zst` was meant as a bundle, and writing an
    /// SQLite store there would be a silent surprise.
    public static func target(_ path: String, isDefault: Bool = false) throws -> Target {
        if ArchiveFormat(fileName: path) != nil { return .bundle(path) }
        if isDefault || path.lowercased().hasSuffix(".ferry") { return .localStore(path) }
        if FileManager.default.fileExists(atPath: path), (try? readOnlyTables(path))?.contains("ferry_meta") == true {
            return .localStore(path)
        }
        let accepted =
            "a bundle is named .tar.gz (or .tgz), .tar.zst (or .tzst) or .zip; a local store is named .ferry or is an existing "
            + "Ferry local store"
        let lower = path.lowercased()
        let archive = [".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar.lz4", ".tar", ".zst", ".gz", ".xz", ".bz2", ".7z", ".rar"]
        if let suffix = archive.first(where: { lower.hasSuffix($0) }) {
            throw TransferError(
                .unknownTarget, "\(path): Ferry does not write \(suffix) archives; \(accepted). Name the target .tar.zst or .tar.gz")
        }
        if FileManager.default.fileExists(atPath: path) {
            throw TransferError(
                .unknownTarget, "\(path) exists and is not a Ferry local store; \(accepted). Choose another name: Ferry never writes over it")
        }
        throw TransferError(.unknownTarget, "\(path): cannot tell what to write; \(accepted)")
    }

    /// The default local store: `$FERRY_LOCAL_STORE`, else `$XDG_DATA_HOME/ferry/local.ferry`, else
    /// `~/.local/share/ferry/local.ferry`.
    public static func defaultLocalStore(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["FERRY_LOCAL_STORE"], !path.isEmpty { return path }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "\(environment["HOME"] ?? NSHomeDirectory())/.local/share"
        return "\(data)/ferry/local.ferry"
    }

    private static func readOnlyTables(_ path: String) throws -> Set<String> {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: SQLiteURI.immutable(path), configuration: configuration)
        defer { try? queue.close() }
        return Set(try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") })
    }
}
