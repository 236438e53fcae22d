import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private directory for scratch files, removed when the object goes away or the run is interrupted.
public final class TemporaryDirectory {
    /// The directory's path.
    public let path: String
    private let token: Int
    private var keep = false
    /// The parent whose run lock this directory holds a claim on, until it is removed or kept.
    private var claimedParent: String?

    /// Creates a directory under `parent` (default: `$TMPDIR` or `/tmp`), named with this run's ID so that a later
    /// run removes it if this one is killed before it can (see ``ScratchRuns``).
    public init(prefix: String = "ferry", parent: String? = nil) throws {
        let base = parent ?? ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let owned = prefix.hasPrefix("ferry-") && ScratchRuns.claim(base)
        var template = Array((owned ? "\(base)/\(prefix).\(ScratchRuns.id).XXXXXX" : "\(base)/\(prefix).XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return nil }
            return String(cString: base)
        }
        guard let created else {
            let error = SystemError.current
            if owned { ScratchRuns.release(base) }
            throw error.coreError("mkdtemp", path: base, writing: true)
        }
        path = created
        claimedParent = owned ? base : nil
        token = CleanupRegistry.register(created, isDirectory: true)
    }

    deinit {
        if !keep { try? FileManager.default.removeItem(atPath: path) }
        CleanupRegistry.unregister(token)
        releaseClaim()
    }

    /// Keeps the directory: it was renamed or is wanted; it will not be deleted.
    public func forget() {
        keep = true
        CleanupRegistry.unregister(token)
        releaseClaim()
    }

    private func releaseClaim() {
        guard let parent = claimedParent else { return }
        claimedParent = nil
        ScratchRuns.release(parent)
    }

    /// Removes the directory and its files now, rather than when the object goes away.
    public func remove() {
        guard !keep else { return }
        try? FileManager.default.removeItem(atPath: path)
        forget()
    }

    /// Removes the directory and its files on another thread while `body` runs, and returns once both are done: for
    /// work that waits on something else (an output's sync) and leaves time for the unlinks.
    public func remove<Result>(whileRunning body: () throws -> Result) rethrows -> Result {
        guard !keep else { return try body() }
        let path = self.path
        let removed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? FileManager.default.removeItem(atPath: path)
            removed.signal()
        }
        defer {
            removed.wait()
            forget()
        }
        return try body()
    }

    /// The scratch directories of ended runs removed so far by this process: how many, and their bytes.
    public static var staleRemoved: (directories: Int, bytes: Int64) { ScratchRuns.removed.withLock { $0 } }

    /// A path inside the directory.
    public func file(_ name: String) -> String { "\(path)/\(name)" }
}
