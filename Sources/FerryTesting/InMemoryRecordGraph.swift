import FerryRecords

/// The answers a bundle writer's ledger gives (repeated identities, type order, dangling references, targets past the
/// DELETE_SELF limit), worked out with tables in memory, record by record: the reference the ledger's tests compare
/// against.
public struct InMemoryRecordGraph {
    private var types = RecordTypeIndex()
    private var owners: [RecordKey: Int32] = [:]
    private var edges: Set<RecordTypeGraph.Edge> = []
    private var pending: [Int32: Set<RecordKey>] = [:]
    private var deleteSelfCounts: [RecordKey: Int] = [:]
    private let deleteSelfLimit: Int

    /// An empty graph, warning past `deleteSelfLimit` DELETE_SELF references to one target.
    public init(deleteSelfLimit: Int = RecordValidator.Limits().maxDeleteSelfReferencesPerTarget) {
        self.deleteSelfLimit = deleteSelfLimit
    }

    /// Registers a record (or deletion) identity with its type.
    /// - Returns: `false` if the identity was already registered (a duplicate).
    public mutating func register(_ id: RecordID, type: String) -> Bool {
        let key = RecordKey(id)
        guard owners[key] == nil else { return false }
        owners[key] = types.index(of: type)
        return true
    }

    /// Notes that records of `type` reference these targets.
    public mutating func addReferences(from type: String, to targets: [RecordID]) {
        let child = types.index(of: type)
        for key in targets.map(RecordKey.init) {
            if let parent = owners[key] {
                if parent != child { edges.insert(RecordTypeGraph.Edge(child: child, parent: parent)) }
            } else {
                pending[child, default: []].insert(key)
            }
        }
    }

    /// Counts one DELETE_SELF reference to `target`.
    /// - Returns: whether the target's count just went over the limit (`true` once per target).
    public mutating func countDeleteSelfReference(to target: RecordKey) -> Bool {
        deleteSelfCounts[target, default: 0] += 1
        return deleteSelfCounts[target] == deleteSelfLimit + 1
    }

    /// The types seen, parents first, with the references whose target was never registered.
    public func ordering() -> RecordTypeGraph.Ordering {
        var all = edges
        var dangling = 0
        for (child, keys) in pending {
            for key in keys {
                if let parent = owners[key] {
                    if parent != child { all.insert(RecordTypeGraph.Edge(child: child, parent: parent)) }
                } else {
                    dangling += 1
                }
            }
        }
        return RecordTypeGraph.ordering(of: types.names, edges: all, danglingReferences: dangling)
    }
}
