import Dispatch

extension DispatchSemaphore {
    /// A semaphore holding `count` permits that may be freed whatever its value then.
    ///
    /// libdispatch traps when a semaphore goes away with a value below the one it was made with: a pool whose owner
    /// stops early (an error, an interrupt) still has permits out. Made at 0 and signalled up, it was made with 0.
    package static func counting(_ count: Int) -> DispatchSemaphore {
        let semaphore = DispatchSemaphore(value: 0)
        for _ in 0..<max(0, count) { semaphore.signal() }
        return semaphore
    }
}
