import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Marks the scratch directories of this process as its own, and removes those of Ferry processes that are gone.
///
/// A process killed with `kill -9` (or by a crash, or a lost machine) cannot remove its scratch files. So every scratch
/// directory's name carries the run's ID (`ferry-spool.r<pid>-<random>.XXXXXX`), and for each parent directory it
/// uses the run holds a ``FileLock`` on `ferry-run.r<id>.lock` there, from its first scratch directory there to its
/// last; the kernel drops the lock however the process ends. The first time a run uses a parent directory, it looks
/// for scratch directories of other runs there: a run whose lock file is missing or can be locked has ended, and its
/// directories are removed.
enum ScratchRuns {
    /// This process's run ID: `r<pid>-<8 random hex digits>`.
    static let id: String = {
        var generator = SystemRandomNumberGenerator()
        let random = String(UInt32.random(in: .min ... .max, using: &generator), radix: 16)
        return "r\(getpid())-" + String(repeating: "0", count: 8 - random.count) + random
    }()

    /// The parent directories with this run's lock (`nil` when it could not be taken), and how many of this run's
    /// scratch directories are there.
    private static let claimed = Mutex<[String: (lock: FileLock?, users: Int)]>([:])

    /// What the sweeps removed, for whoever wants to report it: directories and bytes.
    static let removed = Mutex<(directories: Int, bytes: Int64)>((0, 0))

    /// Takes this run's lock in `parent` (for the first of its scratch directories there) and removes the scratch
    /// directories of ended runs there; each claim is matched by a ``release(_:)``.
    /// - Returns: whether this run holds its lock there, so that directories named with its ID are safe from sweeps.
    ///   Failing never fails the caller: a directory without the ID is made instead.
    static func claim(_ parent: String) -> Bool {
        let (isNew, held) = claimed.withLock { claimed -> (Bool, Bool) in
            if let entry = claimed[parent] {
                claimed[parent]?.users += 1
                return (false, entry.lock != nil)
            }
            // A sweep that finds this file before it is locked takes it for an ended run's and removes it (there are
            // no directories of this run yet); FileLock then takes the lock at the path afresh.
            let lock = try? FileLock.acquire(path: lockPath(id, in: parent))
            claimed[parent] = (lock, 1)
            return (true, lock != nil)
        }
        if isNew { sweep(parent) }
        return held
    }

    /// Lets go of a claim; with the last of this run's scratch directories in `parent` goes its lock file.
    static func release(_ parent: String) {
        claimed.withLock { claimed in
            guard let entry = claimed[parent] else { return }
            guard entry.users <= 1 else {
                claimed[parent]?.users -= 1
                return
            }
            claimed[parent] = nil
            entry.lock?.release()
        }
    }

    /// Removes this run's lock files (on an interruption, once its scratch directories are gone).
    static func releaseAll() {
        claimed.withLock { claimed in
            for entry in claimed.values { entry.lock?.release() }
            claimed.removeAll()
        }
    }

    /// The lock file of a run in a parent directory.
    static func lockPath(_ run: String, in parent: String) -> String { "\(parent)/ferry-run.\(run).lock" }

    /// The run ID in a scratch name (`<prefix>.r<pid>-<hex>.<suffix>` or `ferry-run.r<pid>-<hex>.lock`), if any.
    static func run(inName name: String) -> String? {
        guard name.hasPrefix("ferry-") else { return nil }
        for part in name.split(separator: ".") where part.first == "r" {
            let pieces = part.dropFirst().split(separator: "-")
            if pieces.count == 2, pieces[0].allSatisfy(\.isNumber), pieces[1].count == 8, pieces[1].allSatisfy(\.isHexDigit) {
                return String(part)
            }
        }
        return nil
    }

    /// Removes the scratch directories (and lock files) of runs in `parent` whose process has ended.
    static func sweep(_ parent: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        var byRun: [String: [String]] = [:]
        for name in names {
            guard let run = run(inName: name), run != id else { continue }
            byRun[run, default: []].append(name)
        }
        for (run, names) in byRun {
            // A lock that can be taken (or a lock file that is gone) belongs to a run that has ended; taking it keeps
            // a later sweep away while the directories go, and releasing it removes the file.
            guard let lock = try? FileLock.acquire(path: lockPath(run, in: parent)) else { continue }
            for name in names where name != "ferry-run.\(run).lock" {
                let path = "\(parent)/\(name)"
                let bytes = size(of: path)
                guard (try? FileManager.default.removeItem(atPath: path)) != nil else { continue }
                removed.withLock {
                    $0.directories += 1
                    $0.bytes += bytes
                }
            }
            lock.release()
        }
    }

    /// The bytes of the files under a path.
    private static func size(of path: String) -> Int64 {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let name = enumerator.nextObject() as? String {
            var status = stat()
            if lstat("\(path)/\(name)", &status) == 0, (status.st_mode & S_IFMT) == S_IFREG { total += Int64(status.st_size) }
        }
        return total
    }
}
