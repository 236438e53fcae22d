import CZstd
import FerryCore

/// Makes whole Zstandard frames in one call, for runs of record lines compressed while records are still being read.
///
/// A .tar.zst bundle takes such a frame into its stream as it is (a Zstandard stream is frames one after another, and
/// every decoder reads them so), so the records are compressed once, beside the reading, and the scratch log holds a
/// tenth of their bytes. Same level and checksum as ``ZstdCompressor``; one thread, so the frame depends only on the
/// bytes.
///
/// ```swift
/// let encoder = try ZstdFrameEncoder()
/// let frame = try lines.withUnsafeBytes { try encoder.frame(of: $0) }
/// let back = try ZstdFrameDecoder.bytes(of: frame, size: lines.count)
/// ```
final class ZstdFrameEncoder {
    private let context: OpaquePointer

    /// A compressor at ``ZstdCompressor/level``, writing a content checksum into each frame.
    init() throws {
        context = try ZstdCompressor.makeContext()
    }

    deinit { ZSTD_freeCCtx(context) }

    /// One complete frame holding `bytes`.
    func frame(of bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        let bound = ZSTD_compressBound(bytes.count)
        var status = 0
        let frame = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            status = ZSTD_compress2(context, buffer.baseAddress, bound, bytes.baseAddress, bytes.count)
            count = ZSTD_isError(status) != 0 ? 0 : status
        }
        if ZSTD_isError(status) != 0 { throw BundleError(.writeFailed, "Zstandard could not compress: \(ZstdStatus.describe(status))") }
        return frame
    }
}

/// Reads back a frame that ``ZstdFrameEncoder`` made.
enum ZstdFrameDecoder {
    /// The `size` bytes `frame` holds.
    /// - Throws: ``BundleError`` when the frame is damaged or does not hold exactly `size` bytes.
    static func bytes(of frame: UnsafeRawBufferPointer, size: Int) throws -> [UInt8] {
        var status = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            status = ZSTD_decompress(buffer.baseAddress, size, frame.baseAddress, frame.count)
            count = ZSTD_isError(status) != 0 ? 0 : min(status, size)
        }
        if ZSTD_isError(status) != 0 {
            throw BundleError.damagedScratch("a compressed run of the scratch log could not be read back (\(ZstdStatus.describe(status)))")
        }
        guard status == size else { throw BundleError.damagedScratch("a compressed run of the scratch log holds \(status) bytes, not \(size)") }
        return bytes
    }
}
