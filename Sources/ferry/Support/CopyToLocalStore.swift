import FerryBackend
import FerryCore
import FerryJSON
import FerryLocalStore
import FerryRecords
import FerryTransfer
import Foundation
import Logging
import Synchronization

/// `ferry copy` into a local store: the store opened (a scratch one for a dry run into a new store), the copy through
/// ``CopyToBackend``, and the clean-up after a copy that failed.
struct CopyToLocalStore {
    /// The copy, whose target is the store's path.
    var copy: CopyToBackend
    var target: String { copy.target }
    var options: RecordCopier.Options { copy.options }

    /// Runs the copy, and cleans up after one that fails.
    ///
    /// A store it created is removed (nothing was written: no target), and assets it stored in an existing store
    /// ahead of records that never came are removed again.
    func run(console: Console, started: Date) async throws -> Int32 {
        let isNew = !options.dryRun && !FileManager.default.fileExists(atPath: target)
        // The existing store's asset chunks before the copy wrote any (counted once the copy opened it).
        var assetsBefore: Int?
        do {
            return try await write(console: console, started: started, assetChunksBefore: &assetsBefore)
        } catch {
            if isNew {
                for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: target + suffix) }
                console.logger.info("removed \(target), which this failed copy had created")
            } else if let assetsBefore, let store = try? LocalStore(path: target),
                let now = try? store.assetChunkCount(), now != assetsBefore,
                let removed = try? store.removeUnreferencedAssets(temporaryDirectory: options.temporaryDirectory)
            {
                if removed.count > 0 {
                    console.note(
                        "removed \(Formatting.count(removed.count, "asset")) (\(Formatting.bytes(removed.bytes))) this failed copy had stored "
                            + "in \(target) ahead of records it did not write")
                }
                try? store.close()
            }
            throw error
        }
    }

    private func write(console: Console, started: Date, assetChunksBefore: inout Int?) async throws -> Int32 {
        // A dry run into a store that does not exist yet counts against an empty store in a scratch folder.
        var scratch: TemporaryDirectory?
        var storePath = target
        if options.dryRun, !FileManager.default.fileExists(atPath: target) {
            let directory = try TemporaryDirectory(prefix: "ferry-dry-run")
            storePath = directory.file("empty.ferry")
            scratch = directory
        } else if !options.dryRun {
            let parent = URL(fileURLWithPath: target).deletingLastPathComponent().path
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        }
        defer { withExtendedLifetime(scratch) {} }  // the empty scratch store lives until the report is printed
        let store = try LocalStore(path: storePath, create: true)
        // On Ctrl-C the store keeps every committed batch: say how far it got and that the same command resumes.
        return try await CommittedCount.noted(target: target, kept: true, dryRun: options.dryRun) { committed in
            if !options.dryRun { assetChunksBefore = try store.assetChunkCount() }
            let dryRunNote = options.dryRun ? " (dry run: in a transaction rolled back)" : ""
            let backend = LocalRecordStore(store)
            let code = try await copy.run(
                into: backend, journal: backend, described: "a local store\(dryRunNote)", committed: committed, console: console, started: started)
            try store.close()
            return code
        }
    }
}
