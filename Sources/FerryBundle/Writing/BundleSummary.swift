/// What a finished bundle holds.
public struct BundleSummary: Sendable {
    /// The bundle file.
    public var path: String
    /// Its container.
    public var format: ArchiveFormat
    /// Its manifest.
    public var manifest: BundleManifest
    /// Bytes of payload (records, metadata, assets), before compression.
    public var payloadBytes: Int64
    /// References whose target is not in the bundle (normal for partial exports).
    public var danglingReferences: Int
    /// Whether nothing was written (a dry run).
    public var dryRun: Bool
}
