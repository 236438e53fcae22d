import Dispatch
import FerryCore
import FerrySorting
import Synchronization

/// The spool's scratch log and its list of runs, filled on a queue of their own, a flush at a time.
///
/// The thread that admits records is the one everything else waits for, so a flush's buffers are handed over here:
/// each is hashed into its file's SHA-256, compressed into one Zstandard frame when it is large enough
/// (``SpoolRun/compresses(size:)``), written to the log and listed. At most ``waitingRounds`` flushes wait (4 MiB each by
/// default), so memory stays bounded.
///
/// Only the queue touches the log and the list between ``store(_:)`` and ``sync()``; after ``sync()`` the caller may
/// append to the list itself (``appendEntry(_:)``).
final class SpoolLog: @unchecked Sendable {
    /// One file's buffered lines, flushed as a run.
    struct Buffer {
        /// The run list entry before its place in the log: the run's tag, file and number.
        var entry: [UInt8]
        /// Where the file's hash goes.
        var hash: RunningHash
        var bytes: [UInt8]
    }

    /// A file's SHA-256, updated on the queue only.
    final class RunningHash: @unchecked Sendable {
        var hasher = SHA256Hasher()
    }

    /// The log's path.
    let path: String
    /// The list of runs and of ends of stretches, in the order they happened.
    let runs: ByteRecordFile
    private var output: OutputFile?
    private var encoder: ZstdFrameEncoder?
    /// The log's size so far (read it after ``sync()``).
    private(set) var size: Int64 = 0
    private var record = ByteRecordWriter()
    /// The first error on the queue, handed to the caller at its next call.
    private let failure = Mutex<(any Error)?>(nil)
    private let queue = DispatchQueue(label: "ferry.spool-log")
    private let rounds = DispatchSemaphore.counting(SpoolLog.waitingRounds)
    /// The most flushes handed over and not yet stored.
    ///
    /// With one, the admitting thread and the workers behind it stalled whenever a flush took the queue longer than the
    /// next took to fill (the queue hashes and compresses); with four they rarely do, at a few MB more.
    static let waitingRounds = 4

    /// Creates the log and the list in `directory`.
    init(directory: TemporaryDirectory) throws {
        path = directory.file("records.ndjson")
        // Written beside the queue's other work, through the page cache: the log is read back when the bundle is
        // written, on the thread everything then waits for, and reading it from the disk (as when it was written
        // around the cache) took 55-65 ms of the bench input's write phase where the cache takes 15-20.
        output = try OutputFile(path: path, exclusive: true, writesInBackground: true)
        runs = try ByteRecordFile(path: directory.file("runs"))
    }

    /// Hands a flush's buffers to the queue, waiting first while ``waitingRounds`` flushes are still there.
    /// - Throws: the queue's first error, if one happened since the last call.
    func store(_ buffers: [Buffer]) throws {
        try checkFailure()
        guard !buffers.isEmpty else { return }
        let round = Round(buffers)
        rounds.wait()
        queue.async { [self] in
            if failure.withLock({ $0 == nil }) {
                do {
                    for buffer in round.buffers { try store(buffer) }
                } catch {
                    failure.withLock { $0 = error }
                }
            }
            rounds.signal()
        }
    }

    /// Waits until every flush handed over is stored.
    /// - Throws: the queue's first error.
    func sync() throws {
        queue.sync {}
        try checkFailure()
    }

    /// Appends an entry to the run list (after ``sync()``).
    func appendEntry(_ bytes: [UInt8]) throws { try runs.append(bytes) }

    /// Stores everything handed over, closes the log and ends the list.
    func close() throws {
        try sync()
        try output?.close()
        output = nil
        encoder = nil
        try runs.finish()
    }

    private func checkFailure() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// On the queue: hashes, maybe compresses, writes and lists one buffer.
    private func store(_ buffer: Buffer) throws {
        guard let output else { throw BundleError(.writeFailed, "the spool's log is closed") }
        buffer.bytes.withUnsafeBytes { buffer.hash.hasher.update($0) }
        var run = SpoolRun.plain(offset: size, size: Int64(buffer.bytes.count))
        if SpoolRun.compresses(size: buffer.bytes.count) {
            let encoder = try self.encoder ?? ZstdFrameEncoder()
            self.encoder = encoder
            let frame = try buffer.bytes.withUnsafeBytes { try encoder.frame(of: $0) }
            try frame.withUnsafeBytes { try output.write($0) }
            run.stored = Int64(frame.count)
            run.isCompressed = true
        } else {
            try buffer.bytes.withUnsafeBytes { try output.write($0) }
        }
        size += run.stored
        record.removeAll()
        record.raw(buffer.entry)
        run.encode(into: &record)
        try runs.append(record.bytes)
    }

    /// A flush's buffers on their way to the queue.
    private final class Round: @unchecked Sendable {
        let buffers: [Buffer]
        init(_ buffers: [Buffer]) { self.buffers = buffers }
    }
}
