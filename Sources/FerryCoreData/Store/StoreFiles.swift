import FerryCore
import Foundation

/// The files of a Core Data SQLite store: the database and what lives beside it.
public struct StoreFiles: Sendable, Hashable {
    /// The database file (any extension: `.sqlite`, `.store`, `.db`, …).
    public let store: String
    /// `<store>-wal`, when present.
    public let wal: String?
    /// `<store>-shm`, when present.
    public let shm: String?
    /// `<store>-journal` (a rollback journal), when present.
    public let journal: String?
    /// `.<name without extension>_SUPPORT/_EXTERNAL_DATA`, where externally stored binary data lives, when present.
    public let externalData: String?

    /// Finds the files of a store.
    /// - Throws: ``CoreError`` when the file is missing, ``CoreDataError/Code/notSQLite`` when it is not SQLite.
    public init(path: String) throws {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        store = url.path
        guard MagicNumber.sqlite.matches(try InputFile(path: store).readPrefix(16)) else {
            throw CoreDataError(.notSQLite, "\(path): not an SQLite database (no \"SQLite format 3\" header)")
        }
        func existing(_ candidate: String) -> String? { FileManager.default.fileExists(atPath: candidate) ? candidate : nil }
        wal = existing(store + "-wal")
        shm = existing(store + "-shm")
        journal = existing(store + "-journal")
        let base = url.deletingPathExtension().lastPathComponent
        let support = url.deletingLastPathComponent().appendingPathComponent(".\(base)_SUPPORT/_EXTERNAL_DATA").path
        var isDirectory: ObjCBool = false
        externalData = FileManager.default.fileExists(atPath: support, isDirectory: &isDirectory) && isDirectory.boolValue ? support : nil
    }

    /// Every file of the store that exists (for checking that nothing changed them).
    public var allFiles: [String] {
        var files = [store] + [wal, shm, journal].compactMap { $0 }
        if let externalData {
            let names = (FileManager.default.enumerator(atPath: externalData)?.allObjects as? [String] ?? []).sorted()
            files += names.map { "\(externalData)/\($0)" }
        }
        return files
    }
}
