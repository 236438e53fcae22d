import FerryCore
import FerrySorting

/// What a bundle's payload manifest lists, in memory that stays bounded whatever the number of files: every asset by
/// digest, and every other payload file by path.
package struct PayloadListing {
    /// Every payload file but the assets: its path's UTF-8 bytes → its expected SHA-256 (32 bytes), in path order.
    var files: SortedByteTable
    /// The assets: their paths and digests follow from these.
    var assets: ExternalSortedSet<SHA256Digest>
    /// The first asset listed with another digest than its name's, if any.
    var misnamedAsset: String?

    /// The SHA-256 listed for a payload file other than an asset, if it is listed.
    /// - Throws: ``CoreError`` when the scratch table cannot be read.
    func digest(of path: String) throws -> SHA256Digest? {
        try files.find(path.utf8) { _, value in SHA256Digest(bytes: value) } ?? nil
    }
}
