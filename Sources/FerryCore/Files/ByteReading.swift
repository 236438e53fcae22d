/// Something read from start to end a piece at a time: a file, an asset's bytes.
public protocol ByteReading: AnyObject {
    /// The next bytes, at most `maxCount` of them (at least one unless the end came); empty at the end.
    func read(upTo maxCount: Int) throws -> [UInt8]
}

/// A byte source that reads straight into its caller's buffer, with no array per read: Ferry's own readers (files,
/// assets of stores and bundles), which its writers read through ``ByteReading/readBytes(into:)``.
package protocol BufferReading: ByteReading {
    /// Reads the next bytes into `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension BufferReading {
    public func read(upTo maxCount: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: max(0, maxCount)) { buffer, count in
            count = try read(into: UnsafeMutableRawBufferPointer(buffer))
        }
    }
}

extension ByteReading {
    /// Reads the next bytes into `buffer`: straight in for Ferry's own readers, copied from a piece for others.
    /// - Returns: the number of bytes read; 0 at the end.
    @usableFromInline package func readBytes(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let direct = self as? any BufferReading { return try direct.read(into: buffer) }
        let piece = try read(upTo: buffer.count)
        precondition(piece.count <= buffer.count, "ByteReading.read(upTo:) gave \(piece.count) bytes for \(buffer.count)")
        piece.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[..<$0.count]).copyMemory(from: $0) }
        return piece.count
    }

    /// Reads the next bytes until `buffer` is full or the end comes.
    /// - Returns: the number of bytes read; fewer than `buffer.count` only at the end.
    @usableFromInline package func read(filling buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try readBytes(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }
}
