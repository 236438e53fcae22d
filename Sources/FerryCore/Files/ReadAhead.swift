import Dispatch
import Synchronization

/// Reads byte ranges of a file ahead of the thread that uses them, on a thread of its own, in the order they are named.
///
/// A scratch file written around the page cache is read back from the disk; the thread that reads it back (the one
/// feeding the compressor) would wait for every read. Here a background thread reads the ranges as `ranges` names
/// them, up to `depth` chunks of `chunkSize` bytes ahead. The chunks hold the ranges' bytes one after another, each
/// filled across as many ranges as fit (a file of many small runs costs one hand-over per chunk, not per range); the
/// caller, who knows the ranges' lengths, cuts them apart. Memory is those chunks, allocated once.
///
/// ```swift
/// let ahead = ReadAhead(path: log, ranges: { try steps.nextRun() })   // called on the background thread
/// while let chunk = try ahead.next() { use(chunk) }                    // each valid until the next call
/// let count = try ahead.read(into: buffer)                             // or as a stream of the ranges' bytes
/// ```
public final class ReadAhead {
    /// What the background thread hands over: a chunk's index and its byte count, the end, or an error.
    fileprivate enum Item {
        case chunk(Int, Int)
        case end
        case failed(any Error)
    }

    /// What the background thread touches: never this object itself, so that its `deinit`, which waits for that
    /// thread, cannot run on it.
    private let shared: Shared
    /// The chunk the caller holds, given back at its next call.
    private var held: Int?
    /// What ``read(into:)`` and ``skip(_:)`` left of the held chunk.
    private var rest = UnsafeRawBufferPointer(start: nil, count: 0)
    private var finished = false

    /// Starts reading `path` at the ranges `ranges` returns one after another (`nil` after the last), on a thread of
    /// its own; `ranges` is called on that thread only.
    public init(
        path: String, chunkSize: Int = 1 << 20, depth: Int = 4, ranges: @escaping @Sendable () throws -> (offset: Int64, length: Int64)?
    ) {
        shared = Shared(chunkSize: chunkSize, depth: depth)
        shared.queue.async { [shared] in shared.produce(path: path, ranges: ranges) }
    }

    deinit { cancel() }

    /// The next chunk of the ranges, in order; `nil` after the last.
    ///
    /// The chunk is valid until the next call.
    /// - Throws: what reading the file or naming the ranges threw.
    package func next() throws -> UnsafeRawBufferPointer? {
        if !rest.isEmpty {
            defer { rest = UnsafeRawBufferPointer(start: nil, count: 0) }
            return rest
        }
        if let held {
            self.held = nil
            shared.giveBack(held)
        }
        guard !finished else { return nil }
        shared.readyCount.wait()
        let item = shared.ready.withLock { $0.removeFirst() }
        switch item {
        case .chunk(let index, let count):
            held = index
            return UnsafeRawBufferPointer(rebasing: shared.chunks[index][0..<count])
        case .end:
            finished = true
            return nil
        case .failed(let error):
            finished = true
            throw error
        }
    }

    /// Copies the ranges' next bytes into `buffer`: up to its size, at most what is left of the current chunk (as
    /// `read(2)` may return less); 0 at the end.
    /// - Throws: what reading the file or naming the ranges threw.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !buffer.isEmpty, let bytes = try take(upTo: buffer.count) else { return 0 }
        UnsafeMutableRawBufferPointer(rebasing: buffer[..<bytes.count]).copyMemory(from: bytes)
        return bytes.count
    }

    /// Passes over the ranges' next `count` bytes.
    /// - Throws: ``CoreError`` when fewer are left; what reading the file or naming the ranges threw.
    public func skip(_ count: Int64) throws {
        var left = count
        while left > 0 {
            guard let bytes = try take(upTo: Int(min(left, Int64(Int.max)))) else {
                throw CoreError(.readFailed, "read-ahead: \(left) bytes to pass over past the end of the ranges")
            }
            left -= Int64(bytes.count)
        }
    }

    /// Up to `count` of the next bytes, from the held chunk or the next one; `nil` at the end.
    private func take(upTo count: Int) throws -> UnsafeRawBufferPointer? {
        if rest.isEmpty {
            guard let chunk = try next() else { return nil }
            rest = chunk
        }
        let taken = UnsafeRawBufferPointer(rebasing: rest[..<min(count, rest.count)])
        rest = UnsafeRawBufferPointer(rebasing: rest[taken.count...])
        return taken
    }

    /// Stops reading and waits for the background thread (a caller that stops early, or is done); ``next()`` then
    /// returns `nil`.
    public func cancel() {
        finished = true
        rest = UnsafeRawBufferPointer(start: nil, count: 0)
        shared.cancelled.store(true, ordering: .relaxed)
        // Wakes a background thread waiting for a free chunk; it then sees the flag.
        shared.freeCount.signal()
        shared.queue.sync {}
    }
}

/// The chunks and queues of a ``ReadAhead``, shared with its background thread.
private final class Shared: @unchecked Sendable {
    let queue = DispatchQueue(label: "ferry.read-ahead")
    let chunks: [UnsafeMutableRawBufferPointer]
    let freeChunks: Mutex<[Int]>
    let freeCount: DispatchSemaphore
    let ready = Mutex<[ReadAhead.Item]>([])
    let readyCount = DispatchSemaphore(value: 0)
    let cancelled = Atomic<Bool>(false)

    init(chunkSize: Int, depth: Int) {
        let count = max(2, depth)
        chunks = (0..<count).map { _ in .allocate(byteCount: max(1, chunkSize), alignment: 4096) }
        freeChunks = Mutex(Array(0..<count))
        freeCount = DispatchSemaphore.counting(count)
    }

    deinit {
        for chunk in chunks { chunk.deallocate() }
    }

    func giveBack(_ index: Int) {
        freeChunks.withLock { $0.append(index) }
        freeCount.signal()
    }

    private func hand(_ item: ReadAhead.Item) {
        ready.withLock { $0.append(item) }
        readyCount.signal()
    }

    func produce(path: String, ranges: @Sendable () throws -> (offset: Int64, length: Int64)?) {
        // The chunk being filled; on a failure, what it holds is handed over before the error.
        var filling: (index: Int, count: Int)?
        do {
            let file = try InputFile(path: path)
            while let (offset, length) = try ranges() {
                var position = offset
                let end = offset + length
                while position < end {
                    if filling == nil {
                        freeCount.wait()
                        guard !cancelled.load(ordering: .relaxed), let index = freeChunks.withLock({ $0.popLast() }) else { return }
                        filling = (index, 0)
                    }
                    guard let (index, filled) = filling else { return }
                    let count = Int(min(Int64(chunks[index].count - filled), end - position))
                    try file.read(exactly: UnsafeMutableRawBufferPointer(rebasing: chunks[index][filled..<(filled + count)]), at: position)
                    position += Int64(count)
                    filling = (index, filled + count)
                    if filled + count == chunks[index].count {
                        hand(.chunk(index, filled + count))
                        filling = nil
                    }
                }
            }
            if let (index, filled) = filling, filled > 0 { hand(.chunk(index, filled)) }
            hand(.end)
        } catch {
            if let (index, filled) = filling, filled > 0 { hand(.chunk(index, filled)) }
            hand(.failed(error))
        }
    }
}
