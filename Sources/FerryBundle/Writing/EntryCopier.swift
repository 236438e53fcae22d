import FerryCore

/// Copies entry bodies into the archive through one reused buffer, checking sizes and reporting progress.
final class EntryCopier {
    let archive: ArchiveWriter
    let total: Int64
    let progress: ((BundleWriter.Progress) -> Void)?
    var done: Int64 = 0
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    private var lastReport: Int64 = 0

    init(archive: ArchiveWriter, total: Int64, progress: ((BundleWriter.Progress) -> Void)?) {
        self.archive = archive
        self.total = total
        self.progress = progress
    }

    deinit { buffer.deallocate() }

    func copy(to path: String, size: Int64, read: (UnsafeMutableRawBufferPointer) throws -> Int) throws {
        try archive.beginFile(path, size: size)
        var remaining = size
        while true {
            let count = try read(buffer)
            if count == 0 { break }
            guard Int64(count) <= remaining else {
                throw BundleError.assetResized(path, grew: true)
            }
            try archive.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            remaining -= Int64(count)
            advance(by: Int64(count))
        }
        guard remaining == 0 else { throw BundleError.assetResized(path, grew: false) }
    }

    /// Writes an entry from the spool's runs: a compressed run goes into a .tar.zst as it is, and is decompressed for
    /// any other archive; a plain run is copied.
    func copy(to path: String, size: Int64, runs: SpoolPlan.FileRuns) throws {
        try archive.beginFile(path, size: size)
        var remaining = size
        while let run = try runs.next() {
            guard run.size <= remaining else { throw Self.damaged(path) }
            if run.isCompressed && archive.takesCompressedContent {
                try archive.appendCompressed(size: run.size) { emit in try pass(runs, to: emit) }
            } else if run.isCompressed {
                try run.lines(fromStored: runs.storedBytes()).withUnsafeBytes { try archive.write($0) }
            } else {
                try pass(runs) { try archive.write($0) }
            }
            remaining -= run.size
            advance(by: run.size)
        }
        guard remaining == 0 else { throw Self.damaged(path) }
    }

    /// Hands the current run's stored bytes to `body`, a buffer at a time (``SpoolPlan/FileRuns/read(into:)`` throws
    /// when the log holds fewer than the run's).
    private func pass(_ runs: SpoolPlan.FileRuns, to body: (UnsafeRawBufferPointer) throws -> Void) throws {
        while case let count = try runs.read(into: buffer), count > 0 {
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    private static func damaged(_ path: String) -> BundleError {
        BundleError.damagedScratch("\(path): the scratch log of records does not hold the bytes its plan names")
    }

    /// Counts bytes written, and reports progress every 8 MiB.
    func advance(by count: Int64) {
        done += count
        if let progress, done - lastReport >= 8 << 20 {
            lastReport = done
            progress(.writing(done: done, total: total))
        }
    }
}
