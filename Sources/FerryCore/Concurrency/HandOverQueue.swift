import Foundation

/// A bounded hand-over from producer threads to one consumer: at most `depth` items wait, producers block while it is
/// full, and a failure on either side stops the other.
///
/// A producer ends with ``finish(_:)`` (with its error, if it failed); its error stops the other producers at their
/// next ``push(_:)``, and reaches the consumer from ``pop()`` once the items already handed over are taken and every
/// producer has ended. A consumer that stops ``cancel()``s and waits for the producers to end.
///
/// ```swift
/// let queue = HandOverQueue<[Change]>(depth: 24, producers: 1)
/// // producer thread: try queue.push(batch) …; queue.finish(nil)   (or queue.finish(error))
/// while let batch = try queue.pop() { use(batch) }
/// ```
package final class HandOverQueue<Item>: @unchecked Sendable {
    // @unchecked: every member is used under `condition`.
    private let condition = NSCondition()
    private var items: [Item] = []
    private let depth: Int
    private let producers: Int
    private var finished = 0
    private var cancelled = false
    private var failure: (any Error)?

    /// Thrown by ``push(_:)`` once the consumer cancelled or another producer failed; not a failure of its own.
    package struct Stopped: Error {}

    /// A queue holding at most `depth` items, fed by `producers` producers.
    package init(depth: Int, producers: Int = 1) {
        self.depth = max(1, depth)
        self.producers = producers
    }

    /// How many items wait for the consumer.
    package var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return items.count
    }

    /// Hands an item over, waiting while the queue is full.
    /// - Throws: ``Stopped`` once the consumer cancelled or another producer failed.
    package func push(_ item: Item) throws {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= depth && !cancelled && failure == nil { condition.wait() }
        if cancelled || failure != nil { throw Stopped() }
        items.append(item)
        condition.broadcast()
    }

    /// Ends a producer, with the error it failed with (``Stopped`` and `nil` are no failure); the first failure is the
    /// one the consumer gets.
    package func finish(_ error: (any Error)?) {
        condition.lock()
        if failure == nil, let error, !(error is Stopped) { failure = error }
        finished += 1
        condition.broadcast()
        condition.unlock()
    }

    /// The next item; `nil` once every producer ended; the first producer's failure once the items before it are
    /// taken and every producer ended.
    package func pop() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && finished < producers { condition.wait() }
        if !items.isEmpty {
            let item = items.removeFirst()
            condition.broadcast()
            return item
        }
        if let failure { throw failure }
        return nil
    }

    /// Stops the producers at their next ``push(_:)`` and drops what waits.
    package func cancel() {
        condition.lock()
        cancelled = true
        items.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every producer ended.
    package func waitUntilFinished() {
        condition.lock()
        while finished < producers { condition.wait() }
        condition.unlock()
    }
}
