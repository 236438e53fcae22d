import Foundation

/// A property list as a tree of values.
public indirect enum PlistValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// An integer above `Int64.max` (binary plists store these in 128 bits).
    case unsigned(UInt64)
    case real(Double)
    /// Seconds since 2001-01-01T00:00:00Z (Apple's reference date).
    case date(Double)
    case data([UInt8])
    case string(String)
    /// A keyed archive's object reference.
    case uid(Int)
    case array([PlistValue])
    case set([PlistValue])
    case orderedSet([PlistValue])
    /// Entries in document order; keys are strings.
    case dictionary([Entry])

    /// A dictionary entry.
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: PlistValue

        public init(key: String, value: PlistValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value for a key, if this is a dictionary that has it.
    public subscript(key: String) -> PlistValue? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }
}

/// Limits that keep hostile property lists from exhausting time or memory.
public struct PlistLimits: Sendable, Hashable {
    /// The deepest container nesting (Apple's: 512 on macOS, 128 on iOS).
    public var maxDepth = 512
    /// The deepest nesting of archived objects.
    ///
    /// Lower than ``maxDepth`` because decoding an object takes more stack
    /// than a plain container, and decoding must fit the stack of any thread it runs on (512 KiB on Linux worker
    /// threads); real archives, model graphs included, nest far less.
    public var maxArchiveDepth = 256
    /// The most values a tree may expand to, counting shared sub-trees at every place they appear.
    public var maxExpandedValues = 10_000_000
    /// The most bytes of JSON a plain plist may be written as (``PlistDocument/json(style:limits:)``), shared objects
    /// written out at every place they are used (1 GiB).
    public var maxJSONBytes: Int64 = 1 << 30

    /// The default limits.
    public init() {}
}

extension PlistValue {
    /// Builds the tree of a plist graph.
    ///
    /// Containers referenced more than once are built once and shared; a container that contains itself is a
    /// ``PlistError/Code/cycle`` error; a tree deeper than `limits.maxDepth`, or one whose shared sub-trees would
    /// expand to more than `limits.maxExpandedValues` values, is refused.
    public init<Graph: PlistGraph>(_ graph: Graph, limits: PlistLimits = PlistLimits()) throws(PlistError) {
        var builder = TreeBuilder(graph: graph, limits: limits)
        self = try builder.build(graph.topObject, depth: 0).value
    }
}

private struct TreeBuilder<Graph: PlistGraph> {
    let graph: Graph
    let limits: PlistLimits
    /// Built containers and how many values each expands to.
    var built: [Int: (value: PlistValue, size: Int)] = [:]
    var onPath: Set<Int> = []

    mutating func build(_ object: Int, depth: Int) throws(PlistError) -> (value: PlistValue, size: Int) {
        let kind = try graph.kind(of: object)
        guard kind.isContainer else { return (try scalar(object, kind), 1) }
        if let done = built[object] { return done }
        guard depth < limits.maxDepth else { throw PlistError(.tooDeep, "containers nest deeper than \(limits.maxDepth) levels") }
        guard onPath.insert(object).inserted else { throw PlistError(.cycle, "object \(object) contains itself") }
        defer { onPath.remove(object) }
        let count = try graph.count(object)
        var size = 1
        func grow(_ part: Int) throws(PlistError) {
            size = size &+ part
            guard size <= limits.maxExpandedValues, size > 0 else {
                throw PlistError(
                    .tooLarge, "shared sub-trees expand to more than \(limits.maxExpandedValues) values (a \"billion laughs\" plist)")
            }
        }
        let value: PlistValue
        if kind == .dictionary {
            var entries: [PlistValue.Entry] = []
            entries.reserveCapacity(count)
            for index in 0..<count {
                let key = try graph.key(object, index)
                guard try graph.kind(of: key) == .string else { throw PlistError(.malformed, "dictionary \(object) has a key that is not a string") }
                let child = try build(try graph.value(object, index), depth: depth + 1)
                try grow(child.size + 1)
                entries.append(PlistValue.Entry(key: try graph.string(key), value: child.value))
            }
            value = .dictionary(entries)
        } else {
            var elements: [PlistValue] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                let child = try build(try graph.element(object, index), depth: depth + 1)
                try grow(child.size)
                elements.append(child.value)
            }
            value = kind == .array ? .array(elements) : kind == .set ? .set(elements) : .orderedSet(elements)
        }
        built[object] = (value, size)
        return (value, size)
    }

    func scalar(_ object: Int, _ kind: PlistKind) throws(PlistError) -> PlistValue {
        switch kind {
        case .null: .null
        case .bool: .bool(try graph.bool(object))
        case .integer:
            switch try graph.integer(object) {
            case .signed(let value): .integer(value)
            case .unsigned(let value): .unsigned(value)
            }
        case .real: .real(try graph.real(object))
        case .date: .date(try graph.date(object))
        case .data: .data(try graph.data(object))
        case .string: .string(try graph.string(object))
        case .uid: .uid(try graph.uid(object))
        case .array, .set, .orderedSet, .dictionary: .null
        }
    }
}
