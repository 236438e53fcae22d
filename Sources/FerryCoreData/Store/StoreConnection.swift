import FerryCore
import Foundation
import GRDB

/// A read-only connection to a store that never modifies the source files.
///
/// A store without a pending write-ahead log (or rollback journal) is opened in place with SQLite's `immutable=1`:
/// no writes, no locks, no `-shm` created. A store with one is copied, with its log, to a scratch directory and the
/// copy is opened, so data that lives only in the WAL is read while the source stays byte-for-byte unchanged.
/// All reads run in one transaction: a consistent snapshot.
///
/// Neither way takes SQLite's locks on the source, so an app writing the store at the same time would go unnoticed:
/// the files' signatures are compared around the copy (which is taken again, twice at most) and after every read
/// in place, and a change is an error (`changedWhileRead`, exit 75) rather than a mix of two states.
final class StoreConnection: @unchecked Sendable {
    let files: StoreFiles
    let database: DatabaseQueue
    /// Whether the store was copied before opening (it had a WAL or journal).
    let copied: Bool
    private let scratch: TemporaryDirectory?
    /// The source files as they were when a store read in place was opened.
    private let inPlace: FileSnapshot?
    private static let copyAttempts = 3

    init(files: StoreFiles, temporaryDirectory: String? = nil) throws {
        self.files = files
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "ferry.store"
        // Decided on the same look at the files that later reads are compared with: a log that appears after it is a
        // change, never a log left unread.
        let snapshot = FileSnapshot(paths: Self.sourcePaths(files))
        let logs = Self.sourcePaths(files).dropFirst()
        let pendingLog = logs.contains { (snapshot.signatures[$0] ?? nil)?.size ?? 0 > 0 }
        if pendingLog {
            let scratch = try TemporaryDirectory(prefix: "ferry-store", parent: temporaryDirectory)
            let copy = scratch.file("store.sqlite")
            try Self.copy(files, to: copy)
            // The copy is ours: open it read-write so SQLite can apply the WAL (or roll back a hot journal).
            configuration.readonly = false
            self.scratch = scratch
            copied = true
            inPlace = nil
            database = try Self.open(copy, configuration: configuration, original: files.store)
        } else {
            scratch = nil
            copied = false
            inPlace = snapshot
            database = try Self.open(SQLiteURI.immutable(files.store), configuration: configuration, original: files.store)
            // Read in place: the disk reads the store ahead while its objects are read and mapped (a copy was read
            // whole already).
            FilePrefetch.start(files.store)
        }
    }

    /// The files whose bytes SQLite reads: the database and its logs (present or not).
    private static func sourcePaths(_ files: StoreFiles) -> [String] {
        [files.store, files.store + "-wal", files.store + "-journal"]
    }

    /// Copies the store and its logs, again while a writer changes them during the copy.
    private static func copy(_ files: StoreFiles, to copy: String) throws {
        let paths = sourcePaths(files)
        for _ in 0..<copyAttempts {
            let before = FileSnapshot(paths: paths)
            do {
                for (source, suffix) in zip(paths, ["", "-wal", "-journal"]) {
                    try? FileManager.default.removeItem(atPath: copy + suffix)
                    guard before.signatures[source] ?? nil != nil else { continue }
                    try FileManager.default.copyItem(atPath: source, toPath: copy + suffix)
                }
            } catch {
                // A log removed by a checkpoint between the look and the copy: take the copy again.
                if before.changedFile() != nil { continue }
                throw CoreError(.readFailed, "\(files.store): could not copy the store and its log to read them safely", cause: error)
            }
            if before.changedFile() == nil { return }
        }
        throw CoreDataError(
            .changedWhileRead,
            "\(files.store): the store kept changing while it was copied to be read (is the app running?); close the app, then run again")
    }

    private static func open(_ path: String, configuration: Configuration, original: String) throws -> DatabaseQueue {
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            // Touch the schema now, so a damaged file fails here with a clear message.
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return queue
        } catch let error as DatabaseError {
            throw CoreDataError(.corrupt, "\(original): SQLite cannot read it: \(error.message ?? "\(error.resultCode)")", cause: error)
        }
    }

    /// Runs reads in one transaction (a consistent snapshot of the store).
    /// - Throws: ``CoreDataError``: `corrupt` for what SQLite cannot read, `changedWhileRead` when a store read in
    ///   place was written meanwhile (whatever else went wrong, since a half-written file explains it).
    func read<Result>(_ body: (Database) throws -> Result) throws -> Result {
        let result: Result
        do {
            result = try database.read(body)
        } catch let error as DatabaseError {
            try checkUnchanged()
            throw CoreDataError(.corrupt, "\(files.store): \(error.message ?? "\(error.resultCode)")", cause: error)
        } catch {
            try checkUnchanged()
            throw error
        }
        try checkUnchanged()
        return result
    }

    /// Throws when a store read in place was written since it was opened.
    private func checkUnchanged() throws {
        guard let changed = inPlace?.changedFile() else { return }
        throw CoreDataError(
            .changedWhileRead,
            "\(files.store): \(changed) changed while the store was read, so what was read may mix two states "
                + "(is the app running?); close the app, then run again")
    }

}
