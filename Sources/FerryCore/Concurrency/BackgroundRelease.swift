import Dispatch
import Synchronization

/// Frees values on a background thread, with a bounded backlog: past `limit` values waiting, the caller frees its own.
///
/// Freeing a batch of decoded records costs about as much as making it, so the thread that everyone waits for (an
/// in-order consumer) hands that work off. The bound keeps memory bounded when the background thread falls behind on a
/// busy machine.
///
/// ```swift
/// let release = BackgroundRelease(limit: 4)
/// release.release(spentBatch)  // freed on another thread, or here if 4 are already waiting
/// ```
public final class BackgroundRelease: Sendable {
    private let queue = DispatchQueue(label: "ferry.background-release")
    private let waiting = Atomic<Int>(0)
    /// The most values waiting to be freed at once.
    public let limit: Int

    /// A releaser that lets at most `limit` values wait.
    public init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// The values handed over and not yet freed.
    public var backlog: Int { waiting.load(ordering: .relaxed) }

    /// Takes `value` and frees it on the background thread, or right here when the backlog is full.
    public func release<Value: Sendable>(_ value: consuming Value) {
        guard waiting.add(1, ordering: .relaxed).newValue <= limit else {
            waiting.subtract(1, ordering: .relaxed)
            return  // `value` is freed as this call returns
        }
        let kept = Box(value)
        queue.async {
            // Freed here, before it stops counting as waiting (the closure itself is released only after it returns).
            kept.value = nil
            self.waiting.subtract(1, ordering: .relaxed)
        }
    }

    /// Holds a value until the background thread frees it; touched by that thread only once handed over.
    private final class Box<Value: Sendable>: @unchecked Sendable {
        var value: Value?
        init(_ value: consuming Value) { self.value = value }
    }
}
