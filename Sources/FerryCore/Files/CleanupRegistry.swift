import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The temporary files and directories Ferry is writing, so an interrupted run leaves nothing half-written behind.
///
/// Every ``AtomicOutputFile`` and ``TemporaryDirectory`` registers itself here while it exists. The command-line
/// tool calls ``removeAll()`` when it receives SIGINT or SIGTERM, before it exits.
public enum CleanupRegistry {
    private static let paths = Mutex<[Int: (path: String, isDirectory: Bool)]>([:])
    private static let nextToken = Atomic<Int>(0)

    /// Registers a path to delete on interruption.
    /// - Returns: a token for ``unregister(_:)``.
    public static func register(_ path: String, isDirectory: Bool) -> Int {
        let token = nextToken.add(1, ordering: .relaxed).newValue
        paths.withLock { $0[token] = (path, isDirectory) }
        return token
    }

    /// Forgets a path registered with ``register(_:isDirectory:)``.
    public static func unregister(_ token: Int) {
        _ = paths.withLock { $0.removeValue(forKey: token) }
    }

    /// Deletes every registered path.
    ///
    /// Safe to call from a signal-handling queue.
    public static func removeAll() {
        let all = paths.withLock { current -> [(path: String, isDirectory: Bool)] in
            defer { current.removeAll() }
            return Array(current.values)
        }
        for entry in all {
            if entry.isDirectory {
                try? FileManager.default.removeItem(atPath: entry.path)
            } else {
                unlink(entry.path)
            }
        }
        // With the scratch directories gone, their run's lock files go too.
        ScratchRuns.releaseAll()
    }
}
