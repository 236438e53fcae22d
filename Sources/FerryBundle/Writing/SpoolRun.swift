import FerryCore
import FerrySorting

/// Where a run of one file's lines lies in the spool's log, and how it is stored there: as it is, or as one Zstandard
/// frame (``ZstdFrameEncoder``).
struct SpoolRun: Sendable, Hashable {
    /// Where its stored bytes start in the log.
    var offset: Int64
    /// How many bytes it takes in the log.
    var stored: Int64
    /// How many bytes of lines it holds.
    var size: Int64
    /// Whether the stored bytes are a Zstandard frame.
    var isCompressed: Bool

    /// Runs of at least this many bytes are compressed: smaller ones gain little and would cost a frame each.
    static let smallestCompressed = 64 << 10
    /// Runs over this many bytes (only a run with very long lines) stay as they are, so that reading one back never
    /// holds more than this in memory.
    static let largestCompressed = 16 << 20

    /// Whether a run of `size` bytes is stored compressed.
    static func compresses(size: Int) -> Bool { size >= smallestCompressed && size <= largestCompressed }

    /// A run stored as it is.
    static func plain(offset: Int64, size: Int64) -> SpoolRun {
        SpoolRun(offset: offset, stored: size, size: size, isCompressed: false)
    }

    /// Appends the run to a scratch-file record.
    func encode(into record: inout ByteRecordWriter) {
        record.int64(offset)
        record.int64(stored)
        record.int64(size)
        record.uint8(isCompressed ? 1 : 0)
    }

    /// Reads a run that ``encode(into:)`` wrote.
    init(reading record: inout ByteRecordReader) throws {
        offset = try record.int64()
        stored = try record.int64()
        size = try record.int64()
        isCompressed = try record.uint8() == 1
        guard offset >= 0, stored >= 0, size >= 0, isCompressed || stored == size else {
            throw BundleError.damagedScratch("the spool's list of runs is damaged")
        }
    }

    init(offset: Int64, stored: Int64, size: Int64, isCompressed: Bool) {
        self.offset = offset
        self.stored = stored
        self.size = size
        self.isCompressed = isCompressed
    }

    /// The run's lines, read from the log (and decompressed): for the rare reads of a few runs, and only of
    /// compressed ones, which are at most ``largestCompressed`` bytes.
    func bytes(in log: InputFile) throws -> [UInt8] {
        var stored = [UInt8](repeating: 0, count: Int(stored))
        try stored.withUnsafeMutableBytes { try log.read(exactly: $0, at: offset) }
        return try lines(fromStored: stored)
    }

    /// The run's lines from its stored bytes, decompressed if it is compressed.
    func lines(fromStored stored: [UInt8]) throws -> [UInt8] {
        guard isCompressed else { return stored }
        return try stored.withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: Int(size)) }
    }
}
