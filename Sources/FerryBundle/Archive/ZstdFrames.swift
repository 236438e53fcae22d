import CZstd
import FerryCore
import FerryTextInput

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
        try [UInt8](unsafeUninitializedCapacity: ZSTD_compressBound(bytes.count)) { buffer, count in
            count = try frame(of: bytes, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Makes one complete frame holding `bytes` in `scratch` (grown as needed, and reused from call to call).
    /// - Returns: the frame's length (its bytes are `scratch`'s first).
    func frame(of bytes: UnsafeRawBufferPointer, into scratch: inout [UInt8]) throws -> Int {
        let bound = ZSTD_compressBound(bytes.count)
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        return try scratch.withUnsafeMutableBytes { try frame(of: bytes, into: $0) }
    }

    /// Compresses `bytes` into one frame in `destination`, which has room for Zstandard's bound on it.
    /// - Returns: the frame's length.
    private func frame(of bytes: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        let status = ZSTD_compress2(context, destination.baseAddress, destination.count, bytes.baseAddress, bytes.count)
        if ZSTD_isError(status) != 0 { throw BundleError(.writeFailed, "Zstandard could not compress: \(ZstdStatus.describe(status))") }
        return status
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

/// Zstandard's skippable frames: bytes a decoder passes over, which make room in a stream without changing what it
/// holds (a bundle pads its head with one, so that its assets start on a block of the file: see ``EarlyAssetWriter``).
enum ZstdSkippableFrame {
    /// The smallest frame: its magic number and length.
    static let smallest = 8

    /// A frame of exactly `count` bytes (at least ``smallest``), zeros after the header.
    static func frame(count: Int) -> [UInt8] {
        precondition(count >= smallest && count - smallest <= Int(UInt32.max), "no skippable frame is \(count) bytes")
        var bytes = [UInt8](repeating: 0, count: count)
        // The first of the sixteen magic numbers Zstandard reserves (0x184D2A50...5F), then the content's length.
        let magic: UInt32 = 0x184D_2A50
        let length = UInt32(count - smallest)
        for index in 0..<4 {
            bytes[index] = UInt8(truncatingIfNeeded: magic >> (8 * index))
            bytes[4 + index] = UInt8(truncatingIfNeeded: length >> (8 * index))
        }
        return bytes
    }

    /// The frame that takes a stream of `length` bytes to the next multiple of `unit` (one more unit when less than
    /// ``smallest`` bytes are missing).
    static func padding(after length: Int64, to unit: Int) -> [UInt8] {
        var count = Int((Int64(unit) - length % Int64(unit)) % Int64(unit))
        if count < smallest { count += unit }
        return frame(count: count)
    }
}

/// Zstandard frames of raw blocks: bytes stored as they are, for content that does not compress (photos, video).
///
/// Written by hand because libzstd has no stored mode: it runs its match finder over every byte before it gives up
/// and stores a block raw, and on a bundle's photos that (and the copy into its buffers) was most of the work of
/// writing them. The format is RFC 8878's: a frame header with a 128 KiB window and neither content size nor checksum
/// (§3.1.1.1), then blocks of at most 128 KiB, each after a 3-byte header (§3.1.1.2); every decoder reads them.
enum ZstdRawFrame {
    /// The most bytes a block holds.
    static let blockSize = 128 << 10

    /// The frame header: magic number, descriptor (no content size, not single-segment, no checksum, no
    /// dictionary), window descriptor (2^17 bytes: exponent 7, mantissa 0).
    static let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38]

    /// The header of a raw block of `size` bytes (at most ``blockSize``), the frame's last if `last`.
    static func blockHeader(size: Int, last: Bool) -> (UInt8, UInt8, UInt8) {
        precondition(size <= blockSize, "a raw block of \(size) bytes")
        // Bit 0: last block; bits 1-2: block type (0, raw); bits 3-23: the size.
        let value = UInt32(size) << 3 | (last ? 1 : 0)
        return (UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16))
    }
}
