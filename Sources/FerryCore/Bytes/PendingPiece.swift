/// One piece of bytes (a stored chunk, a streamed piece) handed out over as many reads as its readers' buffers take.
package struct PendingPiece {
    private var bytes: [UInt8] = []
    private var offset = 0

    /// An empty piece.
    package init() {}

    /// Whether every byte of the piece was handed out (a new one is needed).
    package var isEmpty: Bool { offset == bytes.count }

    /// Starts handing out `piece`.
    package mutating func refill(_ piece: [UInt8]) {
        bytes = piece
        offset = 0
    }

    /// Copies the next bytes into `buffer`.
    /// - Returns: how many: as many as fit, of those left.
    package mutating func copy(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - offset)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
        }
        offset += count
        return count
    }
}
