import FerryBundle
import FerryCore
import Foundation
import GRDB

/// What a name given to `ferry copy`, `diff`, `ls`, `cat` or `verify` is: a path or `local:PATH`, resolved here and
/// nowhere else.
public enum Endpoint: Sendable, Hashable {
    /// An archive bundle (`.tar.gz`, `.tar.zst`, `.zip`), or an unpacked bag directory (as a source).
    case bundle(String)
    /// A Ferry local store.
    case localStore(String)
    /// A Core Data SQLite store.
    case coreData(String)
    /// A property list or NSKeyedArchiver cache of objects.
    case archiveCache(String)
    /// A PostgreSQL database (`postgres://` or `postgresql://`), as given (its password included: open it, never show it).
    case postgres(String)

    /// What the source is, for logs: `a bundle`, `a Core Data store`.
    public var kindDescription: String {
        switch self {
        case .bundle: "a bundle"
        case .localStore: "a Ferry local store"
        case .coreData: "a Core Data store"
        case .archiveCache: "a plist or keyed-archive cache"
        case .postgres: "a PostgreSQL database"
        }
    }

    /// The path, or for a database its URL without its password.
    public var path: String {
        switch self {
        case .bundle(let path), .localStore(let path), .coreData(let path), .archiveCache(let path): path
        case .postgres(let url): Endpoint.redacted(url)
        }
    }

    /// Tells what a source is, without modifying it.
    ///
    /// `local:PATH` is a local store; a bundle is known by its extension; a directory holding `bagit.txt` is an
    /// unpacked bag; plists and keyed archives by their first bytes; SQLite files by their tables (a local store has
    /// `ferry_meta`), read with SQLite's `immutable` flag. `postgres://` and `cloudkit://` URLs are reserved for the
    /// backends that come next.
    public static func source(_ name: String) throws -> Endpoint {
        if let path = try localPath(name) {
            guard FileManager.default.fileExists(atPath: path) else {
                throw CoreError(.fileNotFound, "\(path): no such local store (local:\(path) names one that exists, as a source)")
            }
            return .localStore(path)
        }
        if isPostgresURL(name) { return .postgres(name) }
        try refuseURL(name, as: "source")
        let path = name
        if ArchiveFormat(fileName: path) != nil { return .bundle(path) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CoreError(.fileNotFound, "\(path): no such file")
        }
        if isDirectory.boolValue {
            guard FileManager.default.fileExists(atPath: path + "/bagit.txt") else {
                throw TransferError(
                    .unknownSource, "\(path): a directory, but not an unpacked bag (no bagit.txt); \(acceptedSources)")
            }
            return .bundle(path)
        }
        var header = [UInt8](repeating: 0, count: 16)
        let count = try header.withUnsafeMutableBytes { try InputFile(path: path).read(into: $0) }
        header.removeLast(16 - count)
        if header.starts(with: Array("bplist".utf8)) || header.starts(with: Array("<?xml".utf8)) || header.starts(with: Array("<plist".utf8)) {
            return .archiveCache(path)
        }
        guard header.starts(with: Array("SQLite format 3".utf8)) else {
            throw TransferError(.unknownSource, "\(path): \(acceptedSources)")
        }
        let tables = try? readOnlyTables(path)
        if tables?.contains("ferry_meta") == true { return .localStore(path) }
        return .coreData(path)
    }

    private static let acceptedSources =
        "Ferry reads bundles (.tar.gz, .tar.zst, .zip), unpacked bags (a directory with bagit.txt), Core Data stores, "
        + "Ferry local stores (local:PATH or a .ferry file) and plist / keyed-archive caches"

    /// Whether a name is a PostgreSQL URL.
    public static func isPostgresURL(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// The file a name stands for: the path of `local:PATH`, else the name itself.
    public static func filePath(_ name: String) -> String {
        name.hasPrefix("local:") ? String(name.dropFirst("local:".count)) : name
    }

    /// The path of a `local:PATH` name, `nil` for any other name.
    static func localPath(_ name: String) throws -> String? {
        guard name.hasPrefix("local:") else { return nil }
        let path = String(name.dropFirst("local:".count))
        guard !path.isEmpty else { throw TransferError(.unknownTarget, "local: needs a path (local:PATH, such as local:app.db)") }
        return path
    }

    /// Refuses a URL: `postgres://` and `cloudkit://` are not read or written yet, other schemes never.
    static func refuseURL(_ name: String, as role: String) throws {
        // A scheme as RFC 3986 has it: a letter, then letters, digits, "+", "-" or ".".
        guard let range = name.range(of: "://"), let first = name.first, first.isASCII, first.isLetter,
            name[..<range.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return }
        let scheme = name[..<range.lowerBound].lowercased()
        let shown = redacted(name)
        switch scheme {
        case "cloudkit":
            throw TransferError(
                .notYetSupported,
                "\(shown): CloudKit is not a \(role) in this version of Ferry yet; copy through a bundle or a local store meanwhile")
        default:
            throw TransferError(
                role == "source" ? .unknownSource : .unknownTarget,
                "\(shown): Ferry knows no \(scheme):// \(role); it reads and writes paths, local:PATH, and (in later versions) "
                    + "postgres:// and cloudkit:// URLs")
        }
    }

    /// A URL with its password, if any (in its user part, or as a `password=` parameter), shown as `****`; any
    /// other name as it is.
    public static func redacted(_ url: String) -> String { URLRedaction.redacted(url) }

    /// What `ferry copy` can write.
    public enum Target: Sendable, Hashable {
        /// A bundle archive to write.
        case bundle(String)
        /// A local store, created when missing.
        case localStore(String)
        /// A PostgreSQL database, as given (its password included: open it, never show it).
        case postgres(String)

        /// The path, or for a database its URL without its password.
        public var path: String {
            switch self {
            case .bundle(let path), .localStore(let path): path
            case .postgres(let url): Endpoint.redacted(url)
            }
        }

        /// Whether it is a PostgreSQL database.
        public var isPostgres: Bool {
            if case .postgres = self { return true }
            return false
        }
    }

    /// Tells what a target is: a bundle by its extension (`.tar.gz`, `.tgz`, `.tar.zst`, `.tzst`, `.zip`), a local
    /// store by `local:PATH`, by `.ferry`, by being one already, or by being the default local store (`isDefault`,
    /// whatever its name).
    ///
    /// Any other name is refused rather than guessed: `x.tar.xz` or `x.zst` was meant as a bundle, and writing an
    /// SQLite store there would be a silent surprise.
    public static func target(_ name: String, isDefault: Bool = false) throws -> Target {
        if let path = try localPath(name) {
            if FileManager.default.fileExists(atPath: path), (try? readOnlyTables(path))?.contains("ferry_meta") != true {
                throw TransferError(
                    .unknownTarget, "\(path) exists and is not a Ferry local store; local:PATH creates a new one only where nothing is")
            }
            return .localStore(path)
        }
        if isPostgresURL(name) { return .postgres(name) }
        try refuseURL(name, as: "target")
        let path = name
        if ArchiveFormat(fileName: path) != nil { return .bundle(path) }
        if isDefault || path.lowercased().hasSuffix(".ferry") { return .localStore(path) }
        if FileManager.default.fileExists(atPath: path), (try? readOnlyTables(path))?.contains("ferry_meta") == true {
            return .localStore(path)
        }
        let accepted =
            "a bundle is named .tar.gz (or .tgz), .tar.zst (or .tzst) or .zip; a local store is named .ferry, is an existing "
            + "Ferry local store, or is given as local:PATH"
        let lower = path.lowercased()
        let archive = [".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar.lz4", ".tar", ".zst", ".gz", ".xz", ".bz2", ".7z", ".rar"]
        if let suffix = archive.first(where: { lower.hasSuffix($0) }) {
            throw TransferError(
                .unknownTarget, "\(path): Ferry does not write \(suffix) archives; \(accepted). Name the target .tar.zst or .tar.gz")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw TransferError(
                .unknownTarget,
                "\(path) is a directory; a target is a bundle archive (.tar.gz, .tar.zst, .zip) or a local store (ferry unpack makes "
                    + "a bag directory from a bundle)")
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
