#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension UnsafeRawBufferPointer {
    /// Whether both buffers hold the same bytes.
    ///
    /// Runs of up to 64 bytes (the literals between a record line's values, keys, type tags) are compared eight bytes at
    /// a time in place, the last word overlapping the one before: a call to `memcmp` for each cost more than the
    /// comparing (a tenth of preparing a line through its shape). Longer runs go through `memcmp`'s vector loop.
    @inlinable
    package func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let base = baseAddress, let otherBase = other.baseAddress else { return true }
        if count > 64 { return memcmp(base, otherBase, count) == 0 }
        guard count >= 8 else {
            for index in 0..<count where base.load(fromByteOffset: index, as: UInt8.self) != otherBase.load(fromByteOffset: index, as: UInt8.self) {
                return false
            }
            return true
        }
        var index = 0
        while count - index > 8 {
            guard base.loadUnaligned(fromByteOffset: index, as: UInt64.self) == otherBase.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            else { return false }
            index += 8
        }
        return base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == otherBase.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }
}
