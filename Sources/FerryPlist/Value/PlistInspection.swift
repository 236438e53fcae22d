/// What `ferry inspect` reports about a property list or keyed archive.
public struct PlistInspection: Sendable {
    /// The format.
    public var format: PlistDocument.Format
    /// The number of objects.
    public var objectCount: Int
    /// The deepest container nesting, or `nil` when containers form a cycle.
    public var depth: Int?
    /// The kind of the root object.
    public var rootKind: PlistKind
    /// The root dictionary's keys (for an archive: `$top`'s keys).
    public var topKeys: [String]
    /// Whether it is an NSKeyedArchiver archive.
    public var isKeyedArchive: Bool
    /// For archives: the number of archived objects (`$objects`).
    public var archivedObjectCount = 0
    /// For archives: each class and how many objects have it, most used first.
    public var classes: [(name: String, count: Int)]
    /// Why `convert` and `copy` would refuse the document (a cycle, nesting past the limit, a UID that points past the
    /// archive's objects), although it can be described; empty when it reads.
    public var problems: [String] = []

    /// Inspects a parsed document.
    public init(_ document: PlistDocument) throws(PlistError) {
        let graph = document.graph
        format = document.format
        objectCount = graph.objectCount
        rootKind = try graph.kind(of: graph.topObject)
        depth = try Self.depth(of: graph)
        let limit = PlistLimits().maxDepth
        if depth == nil {
            problems.append("containers form a cycle (a container holds itself); Ferry refuses cyclic plists")
        } else if let depth, depth > limit {
            problems.append("containers nest \(depth) levels, more than the \(limit) Ferry reads")
        }
        topKeys = []
        classes = []
        isKeyedArchive = false
        if let (keys, counts, archived) = try Self.archiveSummary(graph) {
            isKeyedArchive = true
            problems += try Self.uidsOutOfRange(graph, objects: archived)
            archivedObjectCount = archived
            topKeys = keys
            classes = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
        } else if rootKind == .dictionary {
            for index in 0..<(try graph.count(graph.topObject)) {
                let key = try graph.key(graph.topObject, index)
                if try graph.kind(of: key) == .string { topKeys.append(try graph.string(key)) }
            }
        }
    }

    /// An archive's top keys and class counts, or `nil` if the graph is not an archive.
    private static func archiveSummary<Graph: PlistGraph>(_ graph: Graph) throws(PlistError) -> ([String], [String: Int], Int)? {
        guard let archive = try? KeyedArchive(graph) else { return nil }
        var counts: [String: Int] = [:]
        for uid in 0..<archive.objectCount {
            let object = try archive.object(uid)
            guard try graph.kind(of: object) == .dictionary, let (archivedClass, _) = try archive.archivedClass(ofObject: object) else {
                continue
            }
            counts[archivedClass.name, default: 0] += 1
        }
        return (try archive.topKeys, counts, archive.objectCount)
    }

    /// The UIDs of an archive that point past its `$objects` (at most three named, then a count).
    private static func uidsOutOfRange<Graph: PlistGraph>(_ graph: Graph, objects: Int) throws(PlistError) -> [String] {
        var found: [String] = []
        var more = 0
        for object in 0..<graph.objectCount where try graph.kind(of: object) == .uid {
            let uid = try graph.uid(object)
            guard uid >= objects else { continue }
            if found.count < 3 {
                found.append("UID \(uid) (object \(object)) points past the archive's \(objects) objects")
            } else {
                more += 1
            }
        }
        if more > 0 { found.append("\(more) more UIDs point past the archive's objects") }
        return found
    }

    /// The longest container path, iteratively with memoisation; `nil` for a cycle.
    private static func depth(of graph: any PlistGraph) throws(PlistError) -> Int? {
        var memo: [Int: Int] = [:]
        var state: [Int: Bool] = [:]  // false: on the stack; true: done
        var stack: [(object: Int, next: Int)] = [(graph.topObject, 0)]
        guard try graph.kind(of: graph.topObject).isContainer else { return 0 }
        state[graph.topObject] = false
        while let (object, next) = stack.last {
            let kind = try graph.kind(of: object)
            let count = try graph.count(object)
            if next < count {
                stack[stack.count - 1].next += 1
                let child = kind == .dictionary ? try graph.value(object, next) : try graph.element(object, next)
                guard try graph.kind(of: child).isContainer else { continue }
                switch state[child] {
                case false?: return nil
                case true?: continue
                case nil:
                    state[child] = false
                    stack.append((child, 0))
                }
                continue
            }
            stack.removeLast()
            var deepest = 0
            for index in 0..<count {
                let child = kind == .dictionary ? try graph.value(object, index) : try graph.element(object, index)
                deepest = max(deepest, memo[child] ?? 0)
            }
            memo[object] = deepest + 1
            state[object] = true
        }
        return memo[graph.topObject]
    }
}
