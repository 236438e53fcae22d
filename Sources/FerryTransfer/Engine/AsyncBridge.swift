import Dispatch
import FerryCore
import Foundation
import Synchronization

/// Where the synchronous world (sources that read files and SQLite on a thread of their own) meets the asynchronous
/// one (backends whose clients are async).
package enum AsyncBridge {
    /// Runs blocking work on a thread of its own, so it never holds one of the cooperative pool's few threads.
    package static func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try body())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Runs blocking work that is not `Sendable` (a copy's closures, a source) on a thread of its own while the caller
    /// waits: the work is handed over, used there alone, and released before the caller resumes.
    package static func handOver<Result: Sendable>(_ work: @escaping () throws -> Result) async throws -> Result {
        let box = WorkBox(work)
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                let outcome: Swift.Result<Result, any Error>
                do {
                    let work = box.take()
                    outcome = .success(try work())
                } catch {
                    outcome = .failure(error)
                }
                continuation.resume(with: outcome)
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Work handed to one thread, taken out once.
    ///
    /// `@unchecked Sendable`: the caller hands it over and waits; only the thread takes it.
    private final class WorkBox<Result>: @unchecked Sendable {
        private var work: (() throws -> Result)?

        init(_ work: @escaping () throws -> Result) { self.work = work }

        func take() -> () throws -> Result {
            defer { work = nil }
            return work ?? { throw CancellationError() }
        }
    }

    /// Waits, on a thread outside the cooperative pool (a source's reading thread), for async work.
    package static func wait<Result: Sendable>(_ work: @escaping @Sendable () async throws -> Result) throws -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await work()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { throw CancellationError() }
        return try result.get()
    }
}

/// A source's batches as an async sequence: the source is read on a thread of its own, at most `depth` batches ahead
/// of the consumer.
///
/// When the consumer stops early (an error, a cancelled task), the reading thread stops at its next batch; ``finish()``
/// waits for it, after which the source may be used again (its findings read).
final class ChangeBatches: AsyncSequence, Sendable {
    typealias Element = [SourceChange]

    private let stream: AsyncThrowingStream<[SourceChange], any Error>
    private let slots: DispatchSemaphore
    private let shared = Shared()

    /// What the reading thread and the consumer share.
    private final class Shared: Sendable {
        struct State {
            var cancelled = false
            var finished = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        let state = Mutex(State())
    }

    /// Thrown in the reading thread when the consumer stopped.
    private struct Stopped: Error {}

    /// Starts reading `source` (used by the reading thread alone until ``finish()`` returns).
    init(_ source: any ChangeSource, depth: Int = 4) {
        // A copy that fails mid-way leaves slots taken (batches read ahead and never consumed): see `counting`.
        let slots = DispatchSemaphore.counting(depth)
        let shared = shared
        let (stream, continuation) = AsyncThrowingStream<[SourceChange], any Error>.makeStream()
        self.stream = stream
        self.slots = slots
        continuation.onTermination = { _ in
            shared.state.withLock { $0.cancelled = true }
            slots.signal()
        }
        let reader = UncheckedReader(source: source)
        let thread = Thread {
            do {
                try reader.source.forEachBatch { batch in
                    slots.wait()
                    if shared.state.withLock({ $0.cancelled }) { throw Stopped() }
                    continuation.yield(batch)
                }
                continuation.finish()
            } catch is Stopped {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            let waiter = shared.state.withLock { state in
                state.finished = true
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[SourceChange], any Error>.AsyncIterator
        let slots: DispatchSemaphore

        mutating func next() async throws -> [SourceChange]? {
            let batch = try await base.next()
            if batch != nil { slots.signal() }
            return batch
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator(), slots: slots) }

    /// Stops the reading thread if it is still reading, and waits until it has let go of the source.
    func finish() async {
        shared.state.withLock { $0.cancelled = true }
        slots.signal()
        await withCheckedContinuation { continuation in
            let ready = shared.state.withLock { state in
                if state.finished { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// A source handed to a reading thread; only that thread uses it until the reading is over.
private struct UncheckedReader: @unchecked Sendable {
    let source: any ChangeSource
}
