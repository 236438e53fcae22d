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
                throw BundleError(.assetChanged, "\(path) grew while it was being written; run again")
            }
            try archive.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            remaining -= Int64(count)
            done += Int64(count)
            if let progress, done - lastReport >= 8 << 20 {
                lastReport = done
                progress(.writing(done: done, total: total))
            }
        }
        guard remaining == 0 else { throw BundleError(.assetChanged, "\(path) shrank while it was being written; run again") }
    }
}
