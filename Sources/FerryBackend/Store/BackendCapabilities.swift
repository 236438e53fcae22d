/// What a backend can do and the limits its requests must keep, so the transfer engine batches and orders to fit.
public struct BackendCapabilities: Sendable, Hashable {
    /// Whether a modify request in a custom zone can be atomic (all or nothing).
    public var atomicZones: Bool
    /// Whether the backend has a change feed per zone (`changes(in:since:limit:)` with sync tokens).
    public var changeFeed: Bool
    /// Whether lookups report deleted records (tombstones) rather than nothing.
    public var reportsTombstones: Bool
    /// The most operations one modify request may hold.
    public var maxOperationsPerRequest: Int
    /// The most record bytes (canonical JSON) one modify request may hold.
    public var maxRequestBytes: Int
    /// The largest asset the backend stores, when it has a limit.
    public var maxAssetSize: Int64?
    /// Whether clients choose record names (CloudKit and Ferry's stores do; a backend that names records itself does not).
    public var clientChosenRecordNames: Bool
    /// Whether the backend refuses what CloudKit refuses from clients (a record name starting with `_`, more than
    /// 1 MB of fields, more than 750 DELETE_SELF references to one record) rather than keeping it.
    public var enforcesCloudKitClientRules: Bool
    /// How many requests may be in flight at once without hurting the backend (the default of `--parallel`).
    public var concurrentRequests: Int

    /// Creates capabilities.
    public init(
        atomicZones: Bool, changeFeed: Bool, reportsTombstones: Bool, maxOperationsPerRequest: Int, maxRequestBytes: Int,
        maxAssetSize: Int64? = nil, clientChosenRecordNames: Bool = true, enforcesCloudKitClientRules: Bool = false,
        concurrentRequests: Int = 1
    ) {
        self.atomicZones = atomicZones
        self.changeFeed = changeFeed
        self.reportsTombstones = reportsTombstones
        self.maxOperationsPerRequest = maxOperationsPerRequest
        self.maxRequestBytes = maxRequestBytes
        self.maxAssetSize = maxAssetSize
        self.clientChosenRecordNames = clientChosenRecordNames
        self.enforcesCloudKitClientRules = enforcesCloudKitClientRules
        self.concurrentRequests = concurrentRequests
    }
}
