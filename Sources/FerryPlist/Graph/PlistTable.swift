/// A property list held in memory as a table of objects: what XML and OpenStep plists are parsed into, so they can be
/// read through the same ``PlistGraph`` interface as binary plists.
public struct PlistTable: PlistGraph {
    /// One object.
    public enum Node: Sendable, Hashable {
        case null
        case bool(Bool)
        case integer(Int64)
        case unsigned(UInt64)
        case real(Double)
        /// Seconds since 2001-01-01T00:00:00Z.
        case date(Double)
        case data([UInt8])
        case string(String)
        case uid(Int)
        case array([Int])
        case set([Int])
        /// An ordered set (binary plists only: XML and OpenStep have none).
        case orderedSet([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    /// The objects.
    public private(set) var nodes: [Node] = []
    /// The root object.
    public var topObject = 0

    /// An empty table.
    public init() {}

    /// Adds an object and returns its index.
    @discardableResult
    public mutating func add(_ node: Node) -> Int {
        nodes.append(node)
        return nodes.count - 1
    }

    /// Replaces an object (used to fill in containers after their children).
    public mutating func set(_ index: Int, _ node: Node) { nodes[index] = node }

    public var objectCount: Int { nodes.count }

    private func node(_ object: Int) throws(PlistError) -> Node {
        guard object >= 0, object < nodes.count else { throw PlistError(.malformed, "object reference \(object) out of range") }
        return nodes[object]
    }

    private func mismatch(_ object: Int, _ expected: String) -> PlistError {
        PlistError(.malformed, "object \(object): expected \(expected)")
    }

    public func kind(of object: Int) throws(PlistError) -> PlistKind {
        switch try node(object) {
        case .null: .null
        case .bool: .bool
        case .integer, .unsigned: .integer
        case .real: .real
        case .date: .date
        case .data: .data
        case .string: .string
        case .uid: .uid
        case .array: .array
        case .set: .set
        case .orderedSet: .orderedSet
        case .dictionary: .dictionary
        }
    }

    public func bool(_ object: Int) throws(PlistError) -> Bool {
        guard case .bool(let value) = try node(object) else { throw mismatch(object, "a Boolean") }
        return value
    }

    public func integer(_ object: Int) throws(PlistError) -> PlistInteger {
        switch try node(object) {
        case .integer(let value): return .signed(value)
        case .unsigned(let value): return .unsigned(value)
        default: throw mismatch(object, "an integer")
        }
    }

    public func real(_ object: Int) throws(PlistError) -> Double {
        guard case .real(let value) = try node(object) else { throw mismatch(object, "a real number") }
        return value
    }

    public func date(_ object: Int) throws(PlistError) -> Double {
        guard case .date(let value) = try node(object) else { throw mismatch(object, "a date") }
        return value
    }

    public func data(_ object: Int) throws(PlistError) -> [UInt8] {
        guard case .data(let value) = try node(object) else { throw mismatch(object, "data") }
        return value
    }

    public func string(_ object: Int) throws(PlistError) -> String {
        guard case .string(let value) = try node(object) else { throw mismatch(object, "a string") }
        return value
    }

    public func string(_ object: Int, equals text: StaticString) throws(PlistError) -> Bool {
        guard case .string(var value) = try node(object) else { throw mismatch(object, "a string") }
        return value.withUTF8 { utf8 in
            utf8.count == text.utf8CodeUnitCount && utf8.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
    }

    public func uid(_ object: Int) throws(PlistError) -> Int {
        guard case .uid(let value) = try node(object) else { throw mismatch(object, "a UID") }
        return value
    }

    public func count(_ object: Int) throws(PlistError) -> Int {
        switch try node(object) {
        case .array(let elements), .set(let elements), .orderedSet(let elements): return elements.count
        case .dictionary(let keys, _): return keys.count
        default: throw mismatch(object, "an array, set or dictionary")
        }
    }

    public func element(_ object: Int, _ index: Int) throws(PlistError) -> Int {
        switch try node(object) {
        case .array(let elements), .set(let elements), .orderedSet(let elements):
            guard elements.indices.contains(index) else { throw PlistError(.malformed, "object \(object): index \(index) out of range") }
            return elements[index]
        default: throw mismatch(object, "an array or set")
        }
    }

    public func key(_ object: Int, _ index: Int) throws(PlistError) -> Int {
        guard case .dictionary(let keys, _) = try node(object) else { throw mismatch(object, "a dictionary") }
        guard keys.indices.contains(index) else { throw PlistError(.malformed, "object \(object): index \(index) out of range") }
        return keys[index]
    }

    public func value(_ object: Int, _ index: Int) throws(PlistError) -> Int {
        guard case .dictionary(_, let values) = try node(object) else { throw mismatch(object, "a dictionary") }
        guard values.indices.contains(index) else { throw PlistError(.malformed, "object \(object): index \(index) out of range") }
        return values[index]
    }
}
