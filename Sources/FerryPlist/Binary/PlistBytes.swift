/// The bytes a binary plist is read from: borrowed (zero-copy, for the length of a scoped call) or owned.
final class PlistBytes: @unchecked Sendable {
    /// The bytes; valid for the lifetime of this object (owned) or of the borrowing call.
    let buffer: UnsafeRawBufferPointer
    private let owned: UnsafeMutableRawBufferPointer?

    /// Copies bytes into storage this object owns.
    init<Bytes: Collection>(copying bytes: Bytes) where Bytes.Element == UInt8 {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        storage.copyBytes(from: bytes)
        owned = storage
        buffer = UnsafeRawBufferPointer(rebasing: storage[0..<bytes.count])
    }

    /// Borrows bytes the caller keeps alive and unchanged while this object is used.
    init(borrowing bytes: UnsafeRawBufferPointer) {
        owned = nil
        buffer = bytes
    }

    deinit { owned?.deallocate() }
}
