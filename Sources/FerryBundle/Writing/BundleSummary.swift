import FerryRecords

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
    /// Changes accepted by `add` but left out when finishing: later occurrences of a record name in its zone.
    public var rejectedAtFinish = 0
    /// Warnings found when finishing: targets with more DELETE_SELF references than CloudKit allows.
    public var warningsAtFinish = 0
}

/// A problem with a change that was only found when the bundle was finished (see ``BundleWriter/finish(createdAt:progress:found:)``).
public struct DeferredProblem: Sendable {
    /// The change's origin as given to ``BundleWriter/add(_:origin:)-(RecordChange,_)`` (by default, its 1-based number
    /// among the changes added).
    public var origin: Int64
    /// The change.
    public var change: RecordChange
    /// What is wrong with it.
    public var problem: RecordProblem
}
