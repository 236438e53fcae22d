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
/// uses the run holds an `flock` on `ferry-run.r<id>.lock` there, from the first scratch directory until it exits;
/// the kernel drops the lock however the process ends. The first time a run uses a parent directory, it looks for
/// scratch directories of other runs there: a run whose lock file is missing or can be locked has ended, and its
/// directories are removed. A lock file is renamed into place only once locked, so a run that is starting is never
/// mistaken for one that ended.
enum ScratchRuns {
    /// This process's run ID: `r<pid>-<8 random hex digits>`.
    static let id: String = {
        var generator = SystemRandomNumberGenerator()
        let random = String(UInt32.random(in: .min ... .max, using: &generator), radix: 16)
        return "r\(getpid())-" + String(repeating: "0", count: 8 - random.count) + random
    }()

    /// The parent directories with this run's lock: path → the locked descriptor (-1 when it could not be taken)
    /// and how many of this run's scratch directories are there.
    private static let claimed = Mutex<[String: (descriptor: Int32, users: Int)]>([:])

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
                return (false, entry.descriptor >= 0)
            }
            let descriptor = lock(in: parent) ?? -1
            claimed[parent] = (descriptor, 1)
            return (true, descriptor >= 0)
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
            guard entry.descriptor >= 0 else { return }
            // Removed while still held, so that no sweep takes it for an ended run's in between.
            unlink(lockPath(id, in: parent))
            close(entry.descriptor)
        }
    }

    /// Removes this run's lock files (on an interruption, once its scratch directories are gone).
    static func releaseAll() {
        claimed.withLock { claimed in
            for (parent, entry) in claimed where entry.descriptor >= 0 {
                unlink(lockPath(id, in: parent))
                close(entry.descriptor)
            }
            claimed.removeAll()
        }
    }

    /// The lock file of a run in a parent directory.
    static func lockPath(_ run: String, in parent: String) -> String { "\(parent)/ferry-run.\(run).lock" }

    /// Creates, locks and renames into place this run's lock file; the descriptor stays open until the process ends.
    private static func lock(in parent: String) -> Int32? {
        var template = Array("\(parent)/ferry-run.new.XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else { return nil }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, rename(temporary, lockPath(id, in: parent)) == 0 else {
            unlink(temporary)
            close(descriptor)
            return nil
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }

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
            let lockFile = lockPath(run, in: parent)
            let descriptor = open(lockFile, O_RDWR | O_CLOEXEC)
            if descriptor >= 0 {
                defer { close(descriptor) }
                // Held: that run is alive. (Locks are per open file: this process's own lock counts as held too.)
                guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            }
            for name in names where name != "ferry-run.\(run).lock" {
                let path = "\(parent)/\(name)"
                let bytes = size(of: path)
                guard (try? FileManager.default.removeItem(atPath: path)) != nil else { continue }
                removed.withLock {
                    $0.directories += 1
                    $0.bytes += bytes
                }
            }
            // Last, and while it is locked: the lock file tells later sweeps nothing once the directories are gone.
            unlink(lockFile)
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
