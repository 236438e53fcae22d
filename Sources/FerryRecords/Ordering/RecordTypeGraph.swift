/// Orders record types parents first, from the edges "records of this type reference records of that type".
///
/// Who references whom is worked out elsewhere, over all the records (a bundle writer does it with sorted runs on
/// disk, in bounded memory); this is the ordering of the few types that result.
public enum RecordTypeGraph {
    /// The result of ordering.
    public struct Ordering: Sendable, Hashable {
        /// Record types, each after every type it references (except within a cycle).
        public var order: [String]
        /// Groups of types that reference each other; within a group the order is by name.
        public var cycles: [[String]]
        /// References whose target is not among the records seen.
        public var danglingReferences: Int
    }

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
