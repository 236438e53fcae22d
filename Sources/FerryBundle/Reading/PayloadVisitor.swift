import FerryCore

/// One file of a bundle as the scan hands it to a visitor, after its path and type were checked.
struct BundleEntry {
    /// What the file is.
    enum Kind {
        /// A BagIt tag file (`bagit.txt`, `bag-info.txt`, the manifests).
        case tag
        /// `data/manifest.json` or `data/schema.json`.
        case metadata
        /// A records or deletions NDJSON file.
        case records(BundleManifest.RecordFile)
        /// An asset.
        case asset(SHA256Digest)
    }

    /// The path relative to the bag's base directory.
    var path: String
    var kind: Kind
    /// For a payload file other than an asset, its rank among them in path order (see ``PayloadFiles``).
    var rank: Int? = nil
    /// The size the archive declares for the entry, if any.
    var declaredSize: Int64? = nil
}

/// What a scan does with the entries it reads: verify them, print them, extract them.
protocol BundleVisitor: AnyObject {
    /// Whether to read this entry's bytes.
    func wants(_ entry: BundleEntry) -> Bool
    /// The entry's bytes begin.
    func begin(_ entry: BundleEntry) throws
    /// The next bytes of the entry.
    func consume(_ bytes: UnsafeRawBufferPointer) throws
    /// The entry ended; `intact` is whether its SHA-256 matched the manifest.
    func end(_ entry: BundleEntry, intact: Bool) throws
    /// A problem that does not stop the scan by itself; throw to stop, return to continue.
    func issue(_ error: BundleError) throws
}
