import Dispatch
import Synchronization

/// Reads byte ranges of a file ahead of the thread that uses them, on a thread of its own, in the order they are named.
///
/// A scratch file written around the page cache is read back from the disk; the thread that reads it back (the one
/// feeding the compressor) would wait for every read. Here a background thread reads the ranges as `ranges` names
/// them, up to `depth` chunks of at most `chunkSize` bytes ahead; a chunk never spans two ranges. Memory is those
/// chunks, allocated once.
///
/// ```swift
/// let ahead = ReadAhead(path: log, ranges: { try steps.nextRun() })   // called on the background thread
/// while let chunk = try ahead.next() { use(chunk) }                    // each valid until the next call
/// ```
public final class ReadAhead: @unchecked Sendable {
    /// What the background thread hands over: a chunk's index and its byte count, the end, or an error.
    private enum Item {
        case chunk(Int, Int)
        case end
        case failed(any Error)
    }

    private let queue = DispatchQueue(label: "ferry.read-ahead")
    private let chunks: [UnsafeMutableRawBufferPointer]
    private let freeChunks: Mutex<[Int]>
    private let freeCount: DispatchSemaphore
    private let ready = Mutex<[Item]>([])
    private let readyCount = DispatchSemaphore(value: 0)
    private let cancelled = Atomic<Bool>(false)
    /// The chunk the caller holds, given back at its next call.
    private var held: Int?
    private var finished = false

    /// Starts reading `path` at the ranges `ranges` returns one after another (`nil` after the last), on a thread of
    /// its own; `ranges` is called on that thread only.
    public init(
        path: String, chunkSize: Int = 1 << 20, depth: Int = 4, ranges: @escaping @Sendable () throws -> (offset: Int64, length: Int64)?
    ) {
        let count = max(2, depth)
        chunks = (0..<count).map { _ in .allocate(byteCount: max(1, chunkSize), alignment: 4096) }
        freeChunks = Mutex(Array(0..<count))
        freeCount = DispatchSemaphore(value: count)
        queue.async { [self] in produce(path: path, ranges: ranges) }
    }

    deinit {
        cancel()
        for chunk in chunks { chunk.deallocate() }
    }

    /// The next chunk of the ranges, in order; `nil` after the last.
    ///
    /// The chunk is valid until the next call.
    /// - Throws: what reading the file or naming the ranges threw.
    public func next() throws -> UnsafeRawBufferPointer? {
        if let held {
            self.held = nil
            giveBack(held)
        }
        guard !finished else { return nil }
        readyCount.wait()
        let item = ready.withLock { $0.removeFirst() }
        switch item {
        case .chunk(let index, let count):
            held = index
            return UnsafeRawBufferPointer(rebasing: chunks[index][0..<count])
        case .end:
            finished = true
            return nil
        case .failed(let error):
            finished = true
            throw error
        }
    }

    /// Stops reading and waits for the background thread (a caller that stops early, or is done); ``next()`` then
    /// returns `nil`.
    public func cancel() {
        finished = true
        cancelled.store(true, ordering: .relaxed)
        // Wakes a background thread waiting for a free chunk; it then sees the flag.
        freeCount.signal()
        queue.sync {}
    }

    private func giveBack(_ index: Int) {
        freeChunks.withLock { $0.append(index) }
        freeCount.signal()
    }

    private func hand(_ item: Item) {
        ready.withLock { $0.append(item) }
        readyCount.signal()
    }

    private func produce(path: String, ranges: @Sendable () throws -> (offset: Int64, length: Int64)?) {
        do {
            let file = try InputFile(path: path)
            while let (offset, length) = try ranges() {
                var position = offset
                let end = offset + length
                while position < end {
                    freeCount.wait()
                    guard !cancelled.load(ordering: .relaxed), let index = freeChunks.withLock({ $0.popLast() }) else { return }
                    let count = Int(min(Int64(chunks[index].count), end - position))
                    try file.read(exactly: UnsafeMutableRawBufferPointer(rebasing: chunks[index][0..<count]), at: position)
                    hand(.chunk(index, count))
                    position += Int64(count)
                }
            }
            hand(.end)
        } catch {
            hand(.failed(error))
        }
    }
}
