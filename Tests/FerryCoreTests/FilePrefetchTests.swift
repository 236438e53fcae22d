import FerryCore
import FerryTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reading a file ahead into the page cache: the file ends up cached and unchanged, and a file that cannot be read is
/// left alone without an error.
@Suite struct FilePrefetchTests {
    #if canImport(Glibc)
        /// The fraction of `path`'s pages in the page cache.
        private static func cachedFraction(_ path: String) throws -> Double {
            let descriptor = open(path, O_RDONLY)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            var status = stat()
            try #require(fstat(descriptor, &status) == 0)
            let size = Int(status.st_size)
            let mapped = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0))
            try #require(mapped != MAP_FAILED)
            defer { munmap(mapped, size) }
            let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
            var residency = [UInt8](repeating: 0, count: (size + pageSize - 1) / pageSize)
            try #require(mincore(mapped, size, &residency) == 0)
            return Double(residency.count { $0 & 1 == 1 }) / Double(residency.count)
        }

        @Test func aFileIsReadIntoTheCacheAndLeftUnchanged() throws {
            let scratch = try Scratch()
            let path = scratch.file("store.sqlite")
            let bytes = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let before = try FileManager.default.attributesOfItem(atPath: path)
            // Out of the cache first (written pages may still be dirty: flushed, then dropped).
            let descriptor = open(path, O_RDONLY)
            try #require(descriptor >= 0)
            fsync(descriptor)
            posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
            close(descriptor)
            let evicted = try Self.cachedFraction(path)
            if evicted == 1 { print("note: the scratch file system keeps files in memory (tmpfs?): the prefetch is not observable here") }
            FilePrefetch.start(path)
            var cached = evicted
            for _ in 0..<100 where cached < 1 {
                Thread.sleep(forTimeInterval: 0.02)
                cached = try Self.cachedFraction(path)
            }
            #expect(cached == 1, "cached \(cached) of the file (before: \(evicted))")
            let after = try FileManager.default.attributesOfItem(atPath: path)
            #expect(after[.modificationDate] as? Date == before[.modificationDate] as? Date)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
        }
    #endif

    @Test func aFileThatCannotBeReadIsLeftAlone() throws {
        let scratch = try Scratch()
        FilePrefetch.start(scratch.file("missing.sqlite"))
        FilePrefetch.start(scratch.path)
        // Nothing to wait for and nothing thrown: the advice is dropped.
        #expect(!FileManager.default.fileExists(atPath: scratch.file("missing.sqlite")))
    }
}
