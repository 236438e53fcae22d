import Foundation
import Synchronization

/// Runs a pure transform over a stream of work items on several threads and hands the results back in input order.
///
/// The producer and the consumer run on the calling thread; at most `window` items are in flight, so memory stays
/// bounded. Used where per-item work (decoding, canonical encoding, hashing) is independent but results must be
/// applied in order (duplicate detection, dependency order, deterministic output).
///
/// ```swift
/// try OrderedParallelMap.run(workers: 2, produce: { nextBatch() }, transform: decode, consume: admit)
/// ```
public enum OrderedParallelMap {
    /// The number of workers to use by default: the cores available.
    public static var defaultWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Transforms every item `produce` yields and consumes the results in order.
    /// - Parameters:
    ///   - workers: transform threads; 1 runs everything on the calling thread.
    ///   - window: the most items in flight.
    ///   - produce: the next item, or `nil` at the end (called on the calling thread).
    ///   - transform: the pure, thread-safe work on one item.
    ///   - consume: receives each result in input order (called on the calling thread), and owns it: it may hand the
    ///     result to another thread to be freed there.
    /// - Throws: the first error of `produce` or `consume`; remaining work is abandoned.
    public static func run<Input: Sendable, Output: Sendable>(
        workers: Int, window: Int? = nil, produce: () throws -> Input?,
        transform: @escaping @Sendable (Input) -> Output, consume: (consuming Output) throws -> Void
    ) throws {
        try withoutActuallyEscaping(consume) { consume in
            let pipeline = OrderedPipeline(workers: workers, window: window, transform: transform, consume: consume)
            defer { pipeline.cancel() }
            while true {
                try pipeline.makeRoom()
                guard let item = try produce() else { break }
                try pipeline.submit(item)
            }
            try pipeline.drain()
        }
    }
}

/// A push-style ordered parallel map: ``submit(_:)`` items as they come, results reach `consume` in order.
///
/// Workers are dedicated threads rather than a dispatch queue: on Linux, libdispatch caps its pool at the number of
/// cores and counts the (busy) calling thread, which would leave one core idle.
public final class OrderedPipeline<Input: Sendable, Output: Sendable> {
    private let pool: WorkerPool<Input, Output>?
    private let transform: @Sendable (Input) -> Output
    private let consume: (consuming Output) throws -> Void
    private let limit: Int
    private var submitted = 0
    private var consumed = 0

    /// Starts the workers.
    /// - Parameters:
    ///   - workers: transform threads; 1 runs everything on the calling thread.
    ///   - window: the most items in flight (default: one more than the workers).
    ///   - transform: the pure, thread-safe work on one item.
    ///   - consume: receives each result in input order, on the thread that calls ``submit(_:)`` and ``drain()``.
    public init(
        workers: Int, window: Int? = nil, transform: @escaping @Sendable (Input) -> Output,
        consume: @escaping (consuming Output) throws -> Void
    ) {
        pool = workers > 1 ? WorkerPool(workers: workers, transform: transform) : nil
        self.transform = transform
        self.consume = consume
        limit = max(1, window ?? workers + 1)
    }

    deinit { cancel() }

    /// Consumes the results that are ready, and waits until fewer than `window` items are in flight.
    /// - Throws: whatever `consume` throws.
    public func makeRoom() throws {
        guard let pool else { return }
        while consumed < submitted, let result = pool.resultIfReady(consumed) {
            consumed += 1
            try consume(result)
        }
        while submitted - consumed >= limit {
            let result = pool.result(consumed)
            consumed += 1
            try consume(result)
        }
    }

    /// Hands an item to the workers, after ``makeRoom()``.
    /// - Throws: whatever `consume` throws.
    public func submit(_ item: Input) throws {
        guard let pool else { return try consume(transform(item)) }
        try makeRoom()
        pool.submit(submitted, item)
        submitted += 1
    }

    /// Waits for every submitted item and consumes the results.
    /// - Throws: whatever `consume` throws.
    public func drain() throws {
        guard let pool else { return }
        while consumed < submitted {
            let result = pool.result(consumed)
            consumed += 1
            try consume(result)
        }
    }

    /// Waits for the workers to finish what they hold, discards the results, and stops them.
    public func cancel() {
        guard let pool else { return }
        while consumed < submitted {
            _ = pool.result(consumed)
            consumed += 1
        }
        pool.close()
    }
}

/// Threads that take numbered items from a queue and leave numbered results.
private final class WorkerPool<Input: Sendable, Output: Sendable>: Sendable {
    private struct State {
        var pending: [(Int, Input)] = []
        var results: [Int: Output] = [:]
        var closed = false
    }

    private let state = Mutex(State())
    private let work = NSCondition()
    private let done = NSCondition()
    private let transform: @Sendable (Input) -> Output

    init(workers: Int, transform: @escaping @Sendable (Input) -> Output) {
        self.transform = transform
        for _ in 0..<workers {
            let thread = Thread { [self] in run() }
            thread.name = "ferry-worker"
            thread.start()
        }
    }

    func submit(_ index: Int, _ item: Input) {
        state.withLock { $0.pending.append((index, item)) }
        work.lock()
        work.signal()
        work.unlock()
    }

    func resultIfReady(_ index: Int) -> Output? {
        state.withLock { $0.results.removeValue(forKey: index) }
    }

    func result(_ index: Int) -> Output {
        while true {
            if let output = resultIfReady(index) { return output }
            done.lock()
            if state.withLock({ $0.results[index] == nil }) { done.wait() }
            done.unlock()
        }
    }

    /// Lets the threads exit once the queue is empty.
    func close() {
        state.withLock { $0.closed = true }
        work.lock()
        work.broadcast()
        work.unlock()
    }

    private func run() {
        while true {
            work.lock()
            var next: (Int, Input)?
            while true {
                let (item, closed) = state.withLock { state -> ((Int, Input)?, Bool) in
                    (state.pending.isEmpty ? nil : state.pending.removeFirst(), state.closed)
                }
                if let item {
                    next = item
                    break
                }
                if closed { break }
                work.wait()
            }
            work.unlock()
            guard let (index, item) = next else { return }
            let output = transform(item)
            state.withLock { $0.results[index] = output }
            done.lock()
            done.broadcast()
            done.unlock()
        }
    }
}
