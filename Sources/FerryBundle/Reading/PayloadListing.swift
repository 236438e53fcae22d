import FerryCore

/// What a bundle's payload manifest lists: every asset by digest, in a set whose memory stays bounded whatever their
/// number, and every other payload file by path.
package struct PayloadListing {
    /// Payload path (relative to the base) → expected digest, for every payload file but the assets.
    var digests: [String: SHA256Digest]
    /// The assets: their paths and digests follow from these.
    var assets: ExternalSortedSet<SHA256Digest>
    /// The first asset listed with another digest than its name's, if any.
    var misnamedAsset: String?
}
