import FerryCore

extension SHA256Digest {
    /// Appends the 64 lowercase hex digits to a JSON writer (without quotes), building no string.
    public func writeHex(to writer: inout JSONWriter) {
        writer.appendRaw { bytes in
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: 64))
            bytes.withUnsafeMutableBytes { writeHex(into: UnsafeMutableRawBufferPointer(rebasing: $0[start..<(start + 64)])) }
        }
    }
}
