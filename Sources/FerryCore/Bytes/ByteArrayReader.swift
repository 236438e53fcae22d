/// Hands out an array's bytes piece by piece, as a file would be read: for readers that pull their input.
public final class ByteArrayReader {
    private let bytes: [UInt8]
    private var offset = 0

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Fills `buffer` with the next bytes.
    /// - Returns: their count; 0 at the end.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, bytes.count - offset)
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
        offset += count
        return count
    }
}
