import CZlib
import CZstd
import FerryCore

/// A file's bytes, decompressed on the fly when it is gzip or Zstandard (`records.ndjson.gz`, `.zst`), else as
/// they are: an input that needs no `gzip -dc … |` first, standard input too.
///
/// zlib and libzstd through their system-library shims: Foundation has no streaming decompressor on Linux. Memory is
/// bounded (64 KiB of input, zlib's 32 KiB window, at most a 128 MiB Zstandard window, libzstd's default limit).
/// Concatenated gzip members and Zstandard frames are read one after another, as `gzip -dc` and `zstd -dc` read them.
final class DecompressingInput {
    private enum Codec {
        case plain
        case gzip(UnsafeMutablePointer<z_stream>)
        case zstd(OpaquePointer)
    }

    private let file: InputFile
    private var codec: Codec = .plain
    private let input: UnsafeMutableRawBufferPointer
    /// The input bytes not yet handed on, `input[next..<filled]`.
    private var next = 0
    private var filled = 0
    private var inputEnded = false
    /// Whether a gzip member or Zstandard frame has begun and not ended.
    private var midStream = false
    /// Compressed bytes consumed, for errors.
    private var compressedOffset: Int64 = 0

    /// What the file is compressed with, if anything.
    private(set) var compression: String?

    /// Reads the file's first bytes and starts the decompressor they call for.
    init(file: InputFile) throws {
        self.file = file
        input = .allocate(byteCount: 1 << 16, alignment: 16)
        do {
            while filled < 4, !inputEnded { try readInput() }
        } catch {
            input.deallocate()
            throw error
        }
        let head = UnsafeRawBufferPointer(rebasing: input[0..<filled])
        if MagicNumber.gzip.matches(head) {
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            guard CZlib_inflateInitGzip(stream) == Z_OK else {
                stream.deallocate()
                input.deallocate()
                throw CoreError(.readFailed, "\(file.path): zlib could not start decompressing")
            }
            codec = .gzip(stream)
            compression = "gzip"
        } else if MagicNumber.zstd.matches(head), let context = ZSTD_createDCtx() {
            codec = .zstd(context)
            compression = "Zstandard"
        }
    }

    deinit {
        switch codec {
        case .plain: break
        case .gzip(let stream):
            inflateEnd(stream)
            stream.deallocate()
        case .zstd(let context): ZSTD_freeDCtx(context)
        }
        input.deallocate()
    }

    /// Reads up to `buffer.count` bytes of the (decompressed) content; 0 at its end.
    /// - Throws: ``CoreError`` when the file cannot be read, or its compressed data is damaged or cut short.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        switch codec {
        case .plain:
            if next < filled {
                let count = min(buffer.count, filled - next)
                buffer.baseAddress?.copyMemory(from: input.baseAddress.unsafelyUnwrapped + next, byteCount: count)
                next += count
                return count
            }
            return inputEnded ? 0 : try file.read(into: buffer)
        case .gzip(let stream):
            return try inflate(stream, into: base, count: buffer.count)
        case .zstd(let context):
            return try decompress(context, into: base, count: buffer.count)
        }
    }

    /// Runs `step` over the input not yet consumed until it produces bytes, reading more input as it runs out; 0 at
    /// the end of the file between two streams.
    /// - Parameter step: decompresses from its input; what it consumed and produced. It keeps ``midStream`` up.
    private func decode(_ step: (UnsafeRawBufferPointer) throws -> (consumed: Int, produced: Int)) throws -> Int {
        while true {
            if next == filled {
                if inputEnded {
                    if midStream { throw truncated() }
                    return 0
                }
                try refillInput()
                continue
            }
            let (consumed, produced) = try step(UnsafeRawBufferPointer(rebasing: input[next..<filled]))
            next += consumed
            compressedOffset += Int64(consumed)
            if produced > 0 { return produced }
            guard consumed > 0 || !midStream else { throw damaged("the decompressor makes no progress") }
        }
    }

    private func inflate(_ stream: UnsafeMutablePointer<z_stream>, into base: UnsafeMutableRawPointer, count: Int) throws -> Int {
        try decode { pending in
            if !midStream {
                // A member ends where another may begin (`cat a.gz b.gz`); anything else after it is not gzip.
                guard pending[0] == 0x1F else { throw damaged("data after the end of the gzip stream") }
                guard inflateReset(stream) == Z_OK else { throw damaged("zlib could not start the next member") }
                midStream = true
            }
            stream.pointee.next_in = UnsafeMutablePointer(mutating: pending.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = UInt32(pending.count)
            stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = UInt32(min(count, Int(UInt32.max)))
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            switch status {
            case Z_STREAM_END: midStream = false
            case Z_OK, Z_BUF_ERROR: break
            default: throw damaged(stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)")
            }
            return (pending.count - Int(stream.pointee.avail_in), count - Int(stream.pointee.avail_out))
        }
    }

    private func decompress(_ context: OpaquePointer, into base: UnsafeMutableRawPointer, count: Int) throws -> Int {
        try decode { pending in
            var source = ZSTD_inBuffer(src: pending.baseAddress, size: pending.count, pos: 0)
            var target = ZSTD_outBuffer(dst: base, size: count, pos: 0)
            let result = ZSTD_decompressStream(context, &target, &source)
            if ZSTD_isError(result) != 0 {
                throw damaged(ZstdStatus.describe(result))
            }
            // 0: a frame ended and everything it holds was handed out.
            midStream = result != 0
            return (source.pos, target.pos)
        }
    }

    private func readInput() throws {
        let count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[filled...]))
        if count == 0 { inputEnded = true } else { filled += count }
    }

    private func refillInput() throws {
        next = 0
        filled = 0
        try readInput()
    }

    private func damaged(_ why: String) -> CoreError {
        CoreError(.readFailed, "\(file.path): its \(compression ?? "") data is damaged near compressed byte \(compressedOffset) (\(why))")
    }

    private func truncated() -> CoreError {
        CoreError(
            .readFailed, "\(file.path): the \(compression ?? "") data ends early, after \(compressedOffset) compressed bytes; the file is cut short")
    }
}
