import FerryCore
import Foundation
import GRDB

/// A read-only connection to a store that never modifies the source files.
///
/// A store without a pending write-ahead log (or rollback journal) is opened in place with SQLite's `immutable=1`:
/// no writes, no locks, no `-shm` created. A store with one is copied, with its log, to a scratch directory and the
/// copy is opened, so data that lives only in the WAL is read while the source stays byte-for-byte unchanged.
/// All reads run in one transaction: a consistent snapshot.
final class StoreConnection: @unchecked Sendable {
    let files: StoreFiles
    let database: DatabaseQueue
    /// Whether the store was copied before opening (it had a WAL or journal).
    let copied: Bool
    private let scratch: TemporaryDirectory?

    init(files: StoreFiles, temporaryDirectory: String? = nil) throws {
        self.files = files
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "ferry.store"
        if files.hasPendingLog {
            let scratch = try TemporaryDirectory(prefix: "ferry-store", parent: temporaryDirectory)
            let copy = scratch.file("store.sqlite")
            do {
                try FileManager.default.copyItem(atPath: files.store, toPath: copy)
                if let wal = files.wal { try FileManager.default.copyItem(atPath: wal, toPath: copy + "-wal") }
                if let journal = files.journal { try FileManager.default.copyItem(atPath: journal, toPath: copy + "-journal") }
            } catch {
                throw CoreError(.readFailed, "\(files.store): could not copy the store and its log to read them safely", cause: error)
            }
            // The copy is ours: open it read-write so SQLite can apply the WAL (or roll back a hot journal).
            configuration.readonly = false
            self.scratch = scratch
            copied = true
            database = try Self.open(copy, configuration: configuration, original: files.store)
        } else {
            scratch = nil
            copied = false
            database = try Self.open(SQLiteURI.immutable(files.store), configuration: configuration, original: files.store)
        }
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
    func read<Result>(_ body: (Database) throws -> Result) throws -> Result {
        do {
            return try database.read(body)
        } catch let error as DatabaseError {
            throw CoreDataError(.corrupt, "\(files.store): \(error.message ?? "\(error.resultCode)")", cause: error)
        }
    }

}
