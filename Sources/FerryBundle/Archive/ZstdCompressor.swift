import CZstd
import FerryCore
import FerryTextInput

/// Compresses a byte stream with Zstandard on the library's own worker threads, into an ``OutputFile``.
///
/// Always in Zstandard's multi-threaded mode, with at least one worker beside the caller: its output does not depend
/// on the number of workers, so a bundle is the same file on a two-core laptop and on a build server. Each job is
/// 1 MiB, which keeps the buffers to a few MB per worker (libarchive's zstd filter cannot set the job size, and its
/// default jobs are eight times as large). Level 3 (`tar --zstd`'s) and a content checksum, as the `zstd` tool writes.
///
/// ```swift
/// let zstd = try ZstdCompressor(file: output, workers: 2)
/// try zstd.write(tarBytes)  // any number of times
/// try zstd.close()          // ends the frame and flushes it into `output`
/// ```
final class ZstdCompressor: StreamCompressor {
    /// The compression level (`tar --zstd` and libarchive use Zstandard's default, 3).
    static let level: Int32 = 3
    /// Bytes of input per job (the smallest Zstandard allows is 512 KiB).
    static let jobSize: Int32 = 1 << 20
    /// The most workers Zstandard's pool takes.
    static let maximumWorkers = 64

    private let context: OpaquePointer
    private var file: OutputFile
    private let output: UnsafeMutableRawBufferPointer
    private var isOpen = true
    /// Whether bytes were written since the last frame ended (a new frame starts with the next bytes).
    private var frameHasBytes = false
    /// Whether anything at all was written, frames of the caller's included.
    private var wroteAnything = false

    /// Starts a compressed stream into `file` with `workers` threads (1...64) compressing beside the caller.
    init(file: OutputFile, workers: Int) throws {
        context = try Self.makeContext(multiThreaded: [
            (ZSTD_c_nbWorkers, Int32(min(max(workers, 1), Self.maximumWorkers)), "\(workers) workers"),
            (ZSTD_c_jobSize, Self.jobSize, "the job size"),
        ])
        self.file = file
        output = .allocate(byteCount: ZSTD_CStreamOutSize(), alignment: 16)
    }

    /// A compression context at ``level`` with a content checksum, as the `zstd` tool writes (and ``ZstdFrameEncoder``
    /// uses), with `multiThreaded` parameters besides.
    static func makeContext(multiThreaded: [(ZSTD_cParameter, Int32, String)] = []) throws -> OpaquePointer {
        guard let context = ZSTD_createCCtx() else { throw BundleError(.writeFailed, "Zstandard could not allocate a compressor") }
        let parameters = [(ZSTD_c_compressionLevel, level, "the level"), (ZSTD_c_checksumFlag, 1, "the content checksum")] + multiThreaded
        for (index, (parameter, value, name)) in parameters.enumerated() {
            let status = ZSTD_CCtx_setParameter(context, parameter, value)
            if ZSTD_isError(status) != 0 {
                ZSTD_freeCCtx(context)
                // The multi-threaded parameters are refused only by a libzstd built without threads.
                let hint = index >= parameters.count - multiThreaded.count ? "; install a libzstd built with multi-threading" : ""
                throw BundleError(.writeFailed, "Zstandard refused \(name): \(ZstdStatus.describe(status))\(hint)")
            }
        }
        return context
    }

    deinit {
        ZSTD_freeCCtx(context)
        output.deallocate()
    }

    /// Appends bytes to the stream.
    ///
    /// Returns once Zstandard holds them: a job is queued when 1 MiB is full, and the call waits only while every
    /// worker is busy and no job buffer is free.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        frameHasBytes = true
        wroteAnything = true
        var input = ZSTD_inBuffer(src: base, size: bytes.count, pos: 0)
        while input.pos < input.size {
            try step(&input, ZSTD_e_continue)
        }
    }

    /// Compresses what is left, ends the frame and writes it out; the stream is closed after, whatever happens.
    func close() throws {
        guard isOpen else { return }
        defer { isOpen = false }
        // An empty stream is still one (empty) frame.
        if frameHasBytes || !wroteAnything { try endFrame() }
    }

    /// Ends the frame being written and writes it out (an empty frame if no bytes went in since the last one ended).
    func endFrame() throws {
        guard isOpen else { throw BundleError(.writeFailed, "the Zstandard stream is closed") }
        var input = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
        while try step(&input, ZSTD_e_end) > 0 {}
        frameHasBytes = false
    }

    /// Appends bytes of complete Zstandard frames made elsewhere (``ZstdFrameEncoder``), after ending the frame being
    /// written: a stream is frames one after another.
    func appendFrames(_ bytes: UnsafeRawBufferPointer) throws {
        if frameHasBytes { try endFrame() }
        guard isOpen else { throw BundleError(.writeFailed, "the Zstandard stream is closed") }
        wroteAnything = true
        try file.write(bytes)
    }

    /// Writes what comes next into `file` instead (after ``endFrame()``, so that each file holds whole frames).
    func redirect(to file: OutputFile) {
        precondition(!frameHasBytes, "ZstdCompressor.redirect in the middle of a frame")
        self.file = file
    }

    /// Stops without ending the frame: later writes are refused, and what the workers still hold is dropped.
    func abandon() { isOpen = false }

    /// Runs the compressor once and writes what it produced; returns what it has still to flush.
    @discardableResult
    private func step(_ input: inout ZSTD_inBuffer, _ directive: ZSTD_EndDirective) throws -> Int {
        guard isOpen || directive == ZSTD_e_end else { throw BundleError(.writeFailed, "the Zstandard stream is closed") }
        var out = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let remaining = ZSTD_compressStream2(context, &out, &input, directive)
        if ZSTD_isError(remaining) != 0 { throw BundleError(.writeFailed, "Zstandard could not compress: \(ZstdStatus.describe(remaining))") }
        if out.pos > 0 { try file.write(UnsafeRawBufferPointer(rebasing: output[..<out.pos])) }
        return remaining
    }
}
