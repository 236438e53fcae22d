import CArchive
import FerryCore
import Foundation

/// Compresses a byte stream with gzip on a thread of its own, so that the thread producing the stream (reading the
/// spool and the assets, framing tar entries) runs beside the compressor instead of waiting for it.
///
/// The bytes go through libarchive's `raw` format with its gzip filter (no timestamp), on a thread that takes 1 MiB
/// chunks from a queue of four: the memory added is those 4 MiB. gzip writes the same output however its input is
/// split, so bundles stay byte-identical and reproducible. (Zstandard has worker threads of its own:
/// ``ZstdCompressor``.)
///
/// ```swift
/// let gzip = try GzipCompressor(file: output)
/// try gzip.write(tarBytes)   // any number of times
/// try gzip.close()           // flushes the compressor into `output`
/// ```
final class GzipCompressor: StreamCompressor, @unchecked Sendable {  // the queue's state is guarded by `condition`; see each member
    private static let chunkSize = 1 << 20
    private static let depth = 4

    /// libarchive's writer; used only by the compressor's thread until that thread has ended.
    private let handle: OpaquePointer
    private let sink: ArchiveSink
    /// The chunk buffers; which of them each side holds is in the guarded state.
    private let chunks: [UnsafeMutableRawBufferPointer]
    private let condition = NSCondition()
    /// Guarded by `condition`: filled chunks in order, with their byte counts.
    private var ready: [(chunk: Int, count: Int)] = []
    /// Guarded by `condition`: the chunks free to fill.
    private var free: [Int]
    /// Guarded by `condition`: no more chunks will come.
    private var ended = false
    /// Guarded by `condition`: the first failure of the compressor or the output.
    private var failure: (any Error)?
    /// Signalled when the compressor's thread has finished.
    private let stopped = DispatchSemaphore(value: 0)
    /// The producer's side: the chunk being filled and how full it is.
    private var current: Int
    private var filled = 0
    private var isOpen = true

    /// Starts the compressor's thread, writing compressed bytes to `file`.
    init(file: OutputFile) throws {
        guard let handle = archive_write_new() else { throw BundleError(.writeFailed, "libarchive could not allocate a compressor") }
        self.handle = handle
        sink = ArchiveSink { try file.write($0) }
        chunks = (0..<Self.depth).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16) }
        free = Array(1..<Self.depth)
        current = 0
        do {
            try open()
        } catch {
            archive_write_free(handle)
            for chunk in chunks { chunk.deallocate() }
            throw error
        }
        let thread = Thread { [self] in run() }
        thread.name = "ferry-compress"
        thread.start()
    }

    deinit {
        abandon()
        for chunk in chunks { chunk.deallocate() }
    }

    /// Appends bytes to the stream.
    /// - Throws: the compressor's or the output's first failure, once it has happened.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            let count = min(rest.count, Self.chunkSize - filled)
            UnsafeMutableRawBufferPointer(rebasing: chunks[current][filled..<filled + count])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[..<count]))
            filled += count
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if filled == Self.chunkSize { try handOver() }
        }
    }

    /// Compresses what is left, ends the compressed stream and waits for the compressor's thread.
    /// - Throws: the compressor's or the output's first failure.
    func close() throws {
        guard isOpen else { return }
        if filled > 0 { try handOver(last: true) }
        finish()
        if let failure = condition.withLock({ failure }) { throw failure }
    }

    /// Stops the compressor without finishing the stream (the output is to be discarded).
    func abandon() {
        guard isOpen else { return }
        fail(BundleError(.writeFailed, "the archive was abandoned"))
        finish()
    }

    /// Gives the filled chunk to the compressor's thread and takes a free one (waiting for one unless this is the last).
    private func handOver(last: Bool = false) throws {
        condition.lock()
        defer { condition.unlock() }
        ready.append((current, filled))
        filled = 0
        condition.broadcast()
        if last { return }
        while free.isEmpty && failure == nil { condition.wait() }
        if let failure { throw failure }
        current = free.removeLast()
    }

    /// Ends the queue and waits for the thread, which closes libarchive's writer.
    private func finish() {
        isOpen = false
        condition.withLock {
            ended = true
            condition.broadcast()
        }
        stopped.wait()
        // Freeing an unclosed writer flushes it: after a failure nothing more may reach the output.
        if sink.error == nil, condition.withLock({ failure != nil }) { sink.error = BundleError(.writeFailed, "abandoned") }
        archive_write_free(handle)
    }

    private func open() throws {
        try sink.check(archive_write_set_format_raw(handle), "set the raw format", handle)
        try sink.check(archive_write_add_filter_gzip(handle), "add gzip", handle)
        try sink.check(archive_write_set_options(handle, "gzip:!timestamp"), "set gzip options", handle)
        try sink.open(handle)
        // The raw format writes one entry's data and nothing else; the header only opens the entry.
        guard let entry = archive_entry_new() else { throw BundleError(.writeFailed, "libarchive could not allocate an entry") }
        defer { archive_entry_free(entry) }
        archive_entry_set_filetype(entry, CArchive_AE_IFREG)
        archive_entry_set_pathname(entry, "stream")
        try sink.check(archive_write_header(handle, entry), "start the compressed stream", handle)
    }

    /// The compressor's thread: compresses chunks in order until the queue ends, then ends the compressed stream.
    private func run() {
        while true {
            condition.lock()
            while ready.isEmpty && !ended { condition.wait() }
            let next = ready.isEmpty ? nil : ready.removeFirst()
            let failed = failure != nil
            condition.unlock()
            guard let next else { break }
            if !failed, let base = chunks[next.chunk].baseAddress, archive_write_data(handle, base, next.count) != next.count {
                fail(sink.failure("compress", handle))
            }
            condition.withLock {
                free.append(next.chunk)
                condition.broadcast()
            }
        }
        if condition.withLock({ failure == nil }), archive_write_close(handle) != ARCHIVE_OK {
            fail(sink.failure("finish the compressed stream", handle))
        }
        stopped.signal()
    }

    private func fail(_ error: any Error) {
        condition.withLock {
            failure = failure ?? error
            condition.broadcast()
        }
    }
}
