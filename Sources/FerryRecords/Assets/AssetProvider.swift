import FerryCore

/// Supplies the bytes of assets by content: a directory of files, a bundle, a backend.
///
/// Writers ask ``canProvide(_:)`` when a record is admitted (so a record whose asset is missing is rejected, not
/// written half), and ``open(_:)`` when they copy the bytes.
public protocol AssetProvider: AnyObject, Sendable {
    /// Whether the asset's bytes are available, with the asset's size.
    /// - Throws: when what the provider knows of its assets cannot be read.
    func canProvide(_ asset: Asset) throws -> Bool
    /// Opens the asset's bytes for reading.
    func open(_ asset: Asset) throws -> any AssetReading
}

/// A provider whose assets are fetched by requests (a backend's): each open and read waits for a round trip, so a
/// bundle writer opens and reads several at once on its workers instead of one after another.
package protocol FetchingAssetProvider: AssetProvider {}

/// An open asset, read from start to end (``ByteReading/read(upTo:)``).
public protocol AssetReading: ByteReading {
    /// Whether the bytes are already known to hash to the asset's digest (so a writer need not hash them again).
    var isVerified: Bool { get }
    /// Checks, after the last byte, that the source did not change while it was read.
    func finish() throws
}

/// An asset reader that can also read at any offset, from several threads at once, so that a bundle writer can read
/// and compress the pieces of a large asset in parallel.
package protocol PositionalAssetReading: AssetReading, BufferReading, Sendable {
    /// Reads up to `buffer.count` bytes at `offset` (fewer only at the end of the file; 0 past it).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
}
