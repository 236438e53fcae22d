/// Learns which record types reference which from a stream of records, and orders the types parents first.
///
/// It also remembers every record identity it has seen (as a compact ``RecordKey``), which is how writers detect a
/// record name used twice in one zone. Memory grows with the number of records (about 40 bytes each) plus the
/// references whose target had not been seen yet.
public struct RecordTypeGraph: Sendable {
    /// The result of ordering.
    public struct Ordering: Sendable, Hashable {
        /// Record types, each after every type it references (except within a cycle).
        public var order: [String]
        /// Groups of types that reference each other; within a group the order is by name.
        public var cycles: [[String]]
        /// References whose target is not among the records seen.
        public var danglingReferences: Int
    }

    private var types = RecordTypeIndex()
    private var owners = RecordKeyMap<Int32>()
    private var edges: Set<Edge> = []
    private var pending: [Int32: Set<RecordKey>] = [:]

    /// Records of the type at index `child` reference records of the type at index `parent`.
    public struct Edge: Hashable, Sendable {
        /// The referencing type's index.
        public var child: Int32
        /// The referenced type's index.
        public var parent: Int32

        /// An edge from `child` to `parent`.
        public init(child: Int32, parent: Int32) {
            self.child = child
            self.parent = parent
        }
    }

    /// Creates an empty graph.
    public init() {}

    /// Whether a record identity has been registered.
    public func contains(_ id: RecordID) -> Bool { contains(RecordKey(id)) }

    /// Whether a record identity has been registered.
    public func contains(_ key: RecordKey) -> Bool { owners[key] != nil }

    /// The record type registered for an identity.
    public func recordType(of id: RecordID) -> String? {
        owners[RecordKey(id)].map { types.names[Int($0)] }
    }

    /// Registers a record (or deletion) identity with its type.
    /// - Returns: `false` if the identity was already registered (a duplicate).
    public mutating func register(_ id: RecordID, type: String) -> Bool {
        register(RecordKey(id), type: type)
    }

    /// Registers a record (or deletion) identity, given as its key, with its type.
    /// - Returns: `false` if the identity was already registered (a duplicate).
    public mutating func register(_ key: RecordKey, type: String) -> Bool {
        // One hash lookup in the usual case; a duplicate gets its first owner back.
        if let previous = owners.updateValue(index(of: type), forKey: key) {
            owners[key] = previous
            return false
        }
        return true
    }

    /// Notes that records of `type` reference these targets.
    public mutating func addReferences(from type: String, to targets: [RecordID]) {
        addReferences(from: type, to: targets.map(RecordKey.init))
    }

    /// Notes that records of `type` reference these targets, given as keys.
    public mutating func addReferences(from type: String, to targets: [RecordKey]) {
        guard !targets.isEmpty else { return }
        let child = index(of: type)
        for key in targets {
            if let parent = owners[key] {
                if parent != child { edges.insert(Edge(child: child, parent: parent)) }
            } else {
                pending[child, default: []].insert(key)
            }
        }
    }

    /// Orders the types seen, parents first; ties and cycles are broken by name, so the result is deterministic.
    public func ordering() -> Ordering {
        var allEdges = edges
        var dangling = 0
        for (child, keys) in pending {
            for key in keys {
                if let parent = owners[key] {
                    if parent != child { allEdges.insert(Edge(child: child, parent: parent)) }
                } else {
                    dangling += 1
                }
            }
        }
        return Self.ordering(of: types.names, edges: allEdges, danglingReferences: dangling)
    }

    /// Orders record types, given by name (an edge's indexes point into `types`), parents first; ties and cycles are
    /// broken by name, so the result is deterministic.
    public static func ordering(of types: [String], edges: Set<Edge>, danglingReferences: Int) -> Ordering {
        let count = types.count
        var parents = [[Int]](repeating: [], count: count)
        for edge in edges { parents[Int(edge.child)].append(Int(edge.parent)) }
        let components = Self.stronglyConnectedComponents(count: count, parents: parents)
        var componentOf = [Int](repeating: 0, count: count)
        for (index, members) in components.enumerated() { for member in members { componentOf[member] = index } }
        // Kahn's algorithm on the condensed graph; a component is ready when all its parents are placed.
        var waitingOn = [Set<Int>](repeating: [], count: components.count)
        var children = [Set<Int>](repeating: [], count: components.count)
        for node in 0..<count {
            for parent in parents[node] where componentOf[parent] != componentOf[node] {
                waitingOn[componentOf[node]].insert(componentOf[parent])
                children[componentOf[parent]].insert(componentOf[node])
            }
        }
        let names = components.map { $0.map { types[$0] }.sorted(by: Self.precedes) }
        var ready = (0..<components.count).filter { waitingOn[$0].isEmpty }
        var order: [String] = []
        var cycles: [[String]] = []
        while !ready.isEmpty {
            ready.sort { Self.precedes(names[$0][0], names[$1][0]) }
            let next = ready.removeFirst()
            order.append(contentsOf: names[next])
            if names[next].count > 1 { cycles.append(names[next]) }
            for child in children[next] {
                waitingOn[child].remove(next)
                if waitingOn[child].isEmpty { ready.append(child) }
            }
        }
        return Ordering(order: order, cycles: cycles, danglingReferences: danglingReferences)
    }

    private mutating func index(of type: String) -> Int32 { types.index(of: type) }

    private static func precedes(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.lexicographicallyPrecedes(rhs.utf8) }

    /// Tarjan's algorithm, iterative so deep graphs cannot overflow the stack.
    private static func stronglyConnectedComponents(count: Int, parents: [[Int]]) -> [[Int]] {
        var index = [Int](repeating: -1, count: count)
        var lowLink = [Int](repeating: 0, count: count)
        var onStack = [Bool](repeating: false, count: count)
        var stack: [Int] = []
        var components: [[Int]] = []
        var counter = 0
        for root in 0..<count where index[root] < 0 {
            var work: [(node: Int, next: Int)] = [(root, 0)]
            index[root] = counter
            lowLink[root] = counter
            counter += 1
            stack.append(root)
            onStack[root] = true
            while let (node, next) = work.last {
                if next < parents[node].count {
                    work[work.count - 1].next += 1
                    let neighbour = parents[node][next]
                    if index[neighbour] < 0 {
                        index[neighbour] = counter
                        lowLink[neighbour] = counter
                        counter += 1
                        stack.append(neighbour)
                        onStack[neighbour] = true
                        work.append((neighbour, 0))
                    } else if onStack[neighbour] {
                        lowLink[node] = min(lowLink[node], index[neighbour])
                    }
                    continue
                }
                work.removeLast()
                if let caller = work.last { lowLink[caller.node] = min(lowLink[caller.node], lowLink[node]) }
                if lowLink[node] == index[node] {
                    var component: [Int] = []
                    while let member = stack.popLast() {
                        onStack[member] = false
                        component.append(member)
                        if member == node { break }
                    }
                    components.append(component)
                }
            }
        }
        return components
    }
}
