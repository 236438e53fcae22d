import Foundation

/// Values costly to make (a preparer that learns as it goes, a compressor's context), handed from one use to the next.
///
/// Each value is used by one thread at a time, whichever took it; at most as many exist as were in use at once.
///
/// ```swift
/// let encoders = ReusePool<ZstdFrameEncoder>()
/// let encoder = try encoders.take { try ZstdFrameEncoder() }
/// defer { encoders.give(encoder) }
/// ```
public final class ReusePool<Value>: @unchecked Sendable {
    // Guarded by `lock`; a value taken is no longer here, so no two threads hold it at once.
    private let lock = NSLock()
    private var spare: [Value] = []

    /// An empty pool.
    public init() {}

    /// A value given back earlier, or a new one from `make`.
    public func take(orMake make: () throws -> Value) rethrows -> Value {
        lock.lock()
        let value = spare.popLast()
        lock.unlock()
        return try value ?? make()
    }

    /// Gives a value back for a later ``take(orMake:)``.
    public func give(_ value: Value) {
        lock.lock()
        spare.append(value)
        lock.unlock()
    }
}
