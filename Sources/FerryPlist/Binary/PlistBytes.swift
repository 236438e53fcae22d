/// Storage a binary plist owns when it was given bytes to copy.
final class PlistBytes: @unchecked Sendable {
    /// The bytes, valid for the lifetime of this object.
    let buffer: UnsafeRawBufferPointer
    private let owned: UnsafeMutableRawBufferPointer

    /// Copies bytes into storage this object owns.
    init<Bytes: Collection>(copying bytes: Bytes) where Bytes.Element == UInt8 {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        storage.copyBytes(from: bytes)
        owned = storage
        buffer = UnsafeRawBufferPointer(rebasing: storage[0..<bytes.count])
    }

    deinit { owned.deallocate() }
}
