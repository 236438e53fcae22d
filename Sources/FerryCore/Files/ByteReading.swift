/// Something read from start to end a buffer at a time: a file, an asset's bytes.
public protocol ByteReading {
    /// Reads the next bytes into `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension ByteReading {
    /// Reads the next bytes until `buffer` is full or the end comes.
    /// - Returns: the number of bytes read; fewer than `buffer.count` only at the end.
    @usableFromInline package func read(filling buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }
}
