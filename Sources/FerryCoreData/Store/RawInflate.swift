import CZlib

/// Inflates raw DEFLATE data (RFC 1951, no zlib header), as Core Data stores its model cache.
///
/// zlib through a tiny shim: Foundation has no raw-deflate API on Linux.
enum RawInflate {
    /// The inflated bytes.
    /// - Parameters:
    ///   - source: what to name in errors (the store and table).
    ///   - limit: the most bytes to produce; larger output is refused (a compression bomb).
    static func inflate(_ input: [UInt8], source: String, limit: Int = 256 << 20) throws(CoreDataError) -> [UInt8] {
        var stream = z_stream()
        guard CZlib_inflateInitRaw(&stream) == Z_OK else { throw CoreDataError(.invalidModel, "\(source): zlib could not start inflating") }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { chunkBuffer -> Int32 in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = UInt32(chunkBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk[0..<produced])
                if output.count > limit { return Z_MEM_ERROR }
                if result == Z_STREAM_END { return Z_OK }
                if result != Z_OK { return result }
                if produced == 0 && stream.avail_in == 0 { return Z_DATA_ERROR }
            }
        }
        guard status == Z_OK else {
            throw CoreDataError(
                .invalidModel,
                status == Z_MEM_ERROR
                    ? "\(source): inflates past \(limit) bytes (refused as a compression bomb)"
                    : "\(source): not raw DEFLATE data (zlib status \(status) after \(stream.total_in) input bytes)")
        }
        return output
    }
}
