import Crypto
import Foundation

/// An incremental SHA-256 computation.
///
/// A thin wrapper over swift-crypto (BoringSSL's SHA-NI code on Linux), so the rest of Ferry depends on one type.
public struct SHA256Hasher: Sendable {
    private var state = SHA256()

    /// Starts an empty computation.
    public init() {}

    /// Adds bytes to the computation.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        state.update(bufferPointer: bytes)
    }

    /// Adds bytes to the computation.
    public mutating func update<Bytes: ContiguousBytes>(_ bytes: Bytes) {
        bytes.withUnsafeBytes { state.update(bufferPointer: $0) }
    }

    /// Finishes the computation.
    public func finalize() -> SHA256Digest {
        let digest = state.finalize()
        // A SHA-256 digest is always 32 bytes, so this cannot fail.
        return digest.withUnsafeBytes { SHA256Digest(bytes: $0) } ?? SHA256Digest.zero
    }

    /// The digest of a whole buffer.
    public static func digest<Bytes: ContiguousBytes>(_ bytes: Bytes) -> SHA256Digest {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
