import FerryBackend
import FerryCore
import FerryLocalStore
import FerryRecords
import Foundation
import Synchronization

/// Reads a source on its own thread while the caller writes, through a bounded queue of batches.
///
/// Reading and mapping a store and writing records each take a core; on two or more cores they overlap. Memory is
/// bounded by `depth` batches of `batchSize` changes. An error on either side stops both: the reader's error is
/// rethrown to the caller, and an error in the caller's body stops the reader at its next batch.
public final class PipelinedChangeSource: ChangeSource, @unchecked Sendable {
    let base: any ChangeSource
    let batchSize: Int
    /// The most batches read ahead of the caller, set before reading.
    ///
    /// A caller that works ahead itself (a copy into PostgreSQL stages a round while the one before is written) needs
    /// fewer.
    public var depth: Int
    /// Work on a change that the writer would otherwise do, set by the consumer before it reads.
    ///
    /// It runs on the reading thread while the caller is behind (its queue at least half full), or on a thread of its
    /// own between the two (``preparesOnItsOwnThread``); the consumer must still handle changes that arrive unprepared.
    public var prepare: (@Sendable (inout SourceChange) -> Void)?
    /// Whether ``prepare`` runs on a thread of its own rather than on the reading thread: for a caller whose own work
    /// leaves a core free, such as a copy into a backend over the network (not a local store's writer, which keeps
    /// one busy).
    public var preparesOnItsOwnThread = false
    /// Changes the caller is done with, to be freed on the reading thread.
    private let garbage = Mutex<[[SourceChange]]>([])

    /// Wraps `base`.
    ///
    /// The default holds 12 288 changes in flight: more than a local store's transaction (10 000 changes), so the
    /// reader goes on while the writer commits one instead of the two taking turns.
    public init(_ base: any ChangeSource, batchSize: Int = 512, depth: Int = 24) {
        self.base = base
        self.batchSize = batchSize
        self.depth = depth
    }

    public var kind: String { base.kind }
    public var description: String { base.description }
    public var fingerprint: String { base.fingerprint }
    public var findings: [String] { base.findings }
    public var mappingPreset: String? { base.mappingPreset }
    public var expectedChanges: Int? { base.expectedChanges }
    public var feedPosition: FeedPosition? { base.feedPosition }
    public var assets: (any AssetProvider)? { base.assets }
    public func canSupply(_ asset: Asset) throws -> Bool { try base.canSupply(asset) }
    public func prepare(for store: LocalStore) throws -> (assets: Int, bytes: Int64) { try base.prepare(for: store) }
    public func prepare(for target: any RecordStore) throws -> (assets: Int, bytes: Int64) { try base.prepare(for: target) }
    public func stageAssets(temporaryDirectory: String?) throws -> (assets: Int, bytes: Int64) {
        try base.stageAssets(temporaryDirectory: temporaryDirectory)
    }

    /// Hands changes the caller is done with back to the reading thread, which frees them.
    ///
    /// Freeing millions of records (their strings, fields and lists) is a good part of a writer's time otherwise.
    /// Give the last references, or the caller frees them after all.
    public func recycle(_ changes: [SourceChange]) {
        garbage.withLock { $0.append(changes) }
    }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        try forEachBatch { batch in
            // By index: a `for … in` loop copies (retains and releases) every change it hands out.
            for index in batch.indices { try body(batch[index]) }
        }
    }

    /// Hands over the reading thread's batches as they are, without copying a change.
    ///
    /// With ``preparesOnItsOwnThread``, a thread of its own prepares each batch between the reading thread and the
    /// caller.
    public func forEachBatch(_ body: ([SourceChange]) throws -> Void) throws {
        let preparer = preparesOnItsOwnThread ? prepare : nil
        // The reader's queue, and the preparer's after it: `depth` batches in flight in all.
        let read = HandOverQueue<[SourceChange]>(depth: preparer == nil ? depth : max(1, depth / 2))
        let queue = preparer == nil ? read : HandOverQueue<[SourceChange]>(depth: max(1, depth - depth / 2))
        // The source is used by the reading thread only until the caller has all it produced.
        let source = UncheckedSource(base)
        let prepareBehind = preparer == nil ? prepare : nil
        let reader = Thread { [self, source, batchSize, depth] in
            let base = source.base
            var batch: [SourceChange] = []
            batch.reserveCapacity(batchSize)
            // The reader prepares changes only while the caller is behind (the queue at least half full): when the
            // caller waits for changes, it has time to prepare them itself, and the reader is the one to spare.
            var preparing = false
            do {
                try base.forEachChange { change in
                    batch.append(change)
                    if preparing, let prepareBehind { prepareBehind(&batch[batch.count - 1]) }
                    if batch.count == batchSize {
                        try read.push(batch)
                        preparing = read.count >= depth / 2
                        batch.removeAll(keepingCapacity: true)
                        // Free what the caller handed back, here rather than on the caller's busy thread.
                        _ = self.garbage.withLock { garbage in
                            let old = garbage
                            garbage = []
                            return old
                        }
                    }
                }
                if !batch.isEmpty { try read.push(batch) }
                read.finish(nil)
            } catch {
                read.finish(error)
            }
        }
        reader.stackSize = 8 << 20
        reader.start()
        if let preparer {
            // Validation, encoding and hashing on a core of their own: on the reading thread they held up the mapping,
            // which is a copy's critical path, and on the caller's they held up its rounds.
            let preparingThread = Thread {
                do {
                    while var batch = try read.pop() {
                        for index in batch.indices { preparer(&batch[index]) }
                        try queue.push(batch)
                    }
                    queue.finish(nil)
                } catch {
                    // The caller stopped (or the reader failed): the reader is stopped and waited for.
                    read.cancel()
                    read.waitUntilFinished()
                    queue.finish(error)
                }
            }
            preparingThread.stackSize = 8 << 20
            preparingThread.start()
        }
        do {
            while let batch = try queue.pop() { try body(batch) }
        } catch {
            queue.cancel()
            queue.waitUntilFinished()
            read.cancel()
            read.waitUntilFinished()
            throw error
        }
        queue.waitUntilFinished()
        read.waitUntilFinished()
    }
}

/// A source handed to the reading thread; only that thread uses it while the pipeline runs.
private struct UncheckedSource: @unchecked Sendable {
    let base: any ChangeSource
    init(_ base: any ChangeSource) { self.base = base }
}

extension PipelinedChangeSource: LineChangeSource {
    /// Whether the wrapped source reads lines.
    public var readsLines: Bool { (base as? any LineChangeSource)?.readsLines ?? false }

    /// The wrapped source's pages of lines, read on the calling thread: a reader of lines prepares them on threads of
    /// its own, and the wrapped source asks for each page while the one before is handed on.
    public func forEachLinePage(_ body: (ChangeLines) throws -> Void) throws {
        guard let base = base as? any LineChangeSource else {
            throw TransferError(.unsupported, "\(description): this source does not read its changes as lines")
        }
        try base.forEachLinePage(body)
    }
}
