import FerryCore
import Foundation

/// An NSKeyedArchiver archive, read without the app's classes and without Foundation's unarchiver (which aborts the
/// process on malformed input, formats.md §5).
///
/// UIDs are resolved lazily and memoised: each object is decoded once, shared objects stay shared, and an object
/// that contains itself decodes as ``ArchivedValue/cycle(uid:)`` where it recurs (model graphs are cyclic by design).
/// Depth and the total expanded size are limited.
///
/// ```swift
/// let archive = try KeyedArchive(BinaryPlist(bytes: blob))
/// let id = try archive.recordID()                      // fast path for archived CKRecordIDs
/// let root = try archive.decode()                      // the whole graph under $top.root
/// ```
public struct KeyedArchive<Graph: PlistGraph>: Sendable {
    /// The plist the archive lives in.
    public let graph: Graph
    /// The `$objects` array.
    let objects: Int
    /// The number of objects.
    public let objectCount: Int
    /// The `$top` dictionary.
    let top: Int

    /// Checks the archive's frame: `$archiver`, `$version`, `$objects`, `$top`.
    /// - Throws: ``PlistError/Code/notAnArchive`` for other plists, ``PlistError/Code/malformedArchive`` for broken ones.
    public init(_ graph: Graph) throws(PlistError) {
        self.graph = graph
        let root = graph.topObject
        guard try graph.kind(of: root) == .dictionary,
            let archiver = try graph.lookup(root, "$archiver"), try graph.isString(archiver, "NSKeyedArchiver")
        else {
            throw PlistError(.notAnArchive, "not an NSKeyedArchiver archive (no \"$archiver\": \"NSKeyedArchiver\")")
        }
        guard let objects = try graph.lookup(root, "$objects"), try graph.kind(of: objects) == .array else {
            throw PlistError(.malformedArchive, "the archive has no $objects array")
        }
        guard let top = try graph.lookup(root, "$top"), try graph.kind(of: top) == .dictionary else {
            throw PlistError(.malformedArchive, "the archive has no $top dictionary")
        }
        if let version = try graph.lookup(root, "$version"), try graph.kind(of: version) == .integer {
            let number = try graph.integer(version).int64 ?? 0
            guard number == 100_000 else { throw PlistError(.malformedArchive, "unsupported archive $version \(number) (expected 100000)") }
        }
        self.objects = objects
        self.top = top
        objectCount = try graph.count(objects)
    }

    /// The keys of `$top`, in archive order (`root` for most archives; CKRecord system fields use many).
    public var topKeys: [String] {
        get throws(PlistError) {
            var keys: [String] = []
            for index in 0..<(try graph.count(top)) { keys.append(try graph.string(graph.key(top, index))) }
            return keys
        }
    }

    /// The UID `$top[key]` points to, if the key exists.
    public func topUID(_ key: StaticString) throws(PlistError) -> Int? {
        guard let value = try graph.lookup(top, key) else { return nil }
        guard try graph.kind(of: value) == .uid else { throw PlistError(.malformedArchive, "$top.\(key) is not a UID") }
        return try graph.uid(value)
    }

    /// Decodes the object under `$top.root`, or under the only top key when there is no `root`.
    public func decode(limits: PlistLimits = PlistLimits()) throws(PlistError) -> ArchivedValue {
        let keys = try topKeys
        let key = keys.contains("root") ? "root" : keys.count == 1 ? keys[0] : nil
        guard let key else {
            throw PlistError(.malformedArchive, "$top has no \"root\" key; its keys are \(keys.joined(separator: ", "))")
        }
        return try decodeTop(limits: limits).first { $0.key == key }?.value ?? .null
    }

    /// Decodes every `$top` entry, sharing objects between them.
    public func decodeTop(limits: PlistLimits = PlistLimits()) throws(PlistError) -> [(key: String, value: ArchivedValue)] {
        let decoder = ArchiveDecoder(archive: self, limits: limits)
        var result: [(key: String, value: ArchivedValue)] = []
        for index in 0..<(try graph.count(top)) {
            let key = try graph.string(graph.key(top, index))
            result.append((key, try decoder.fieldValue(graph.value(top, index), depth: 0).value))
        }
        return result
    }

    /// The graph index of the object with a UID.
    func object(_ uid: Int) throws(PlistError) -> Int {
        guard uid >= 0, uid < objectCount else {
            throw PlistError(.malformedArchive, "UID \(uid) is not below the number of objects (\(objectCount))")
        }
        return try graph.element(objects, uid)
    }

    /// The class of an object dictionary (from its `$class` UID).
    func archivedClass(ofObject object: Int) throws(PlistError) -> (ArchivedClass, classUID: Int)? {
        guard let reference = try graph.lookup(object, "$class") else { return nil }
        guard try graph.kind(of: reference) == .uid else { throw PlistError(.malformedArchive, "a $class is not a UID") }
        let uid = try graph.uid(reference)
        let definition = try self.object(uid)
        guard try graph.kind(of: definition) == .dictionary, let nameObject = try graph.lookup(definition, "$classname"),
            try graph.kind(of: nameObject) == .string
        else {
            throw PlistError(.malformedArchive, "class UID \(uid) has no $classname")
        }
        let name = try graph.string(nameObject)
        var chain: [String] = []
        if let classes = try graph.lookup(definition, "$classes"), try graph.kind(of: classes) == .array {
            for index in 0..<(try graph.count(classes)) {
                let element = try graph.element(classes, index)
                if try graph.kind(of: element) == .string { chain.append(try graph.string(element)) }
            }
        }
        if chain.first != name { chain.insert(name, at: 0) }
        return (ArchivedClass(name: name, chain: chain), uid)
    }
}

/// Decodes objects by UID with memoisation, cycle detection and limits; one per decode call.
final class ArchiveDecoder<Graph: PlistGraph> {
    let archive: KeyedArchive<Graph>
    let limits: PlistLimits
    private var decoded: [Int: (value: ArchivedValue, size: Int)] = [:]
    private var onPath: Set<Int> = []
    private var classes: [Int: ArchivedClass] = [:]

    init(archive: KeyedArchive<Graph>, limits: PlistLimits) {
        self.archive = archive
        self.limits = limits
    }

    var graph: Graph { archive.graph }

    /// Decodes the object with a UID.
    func decode(uid: Int, depth: Int) throws(PlistError) -> (value: ArchivedValue, size: Int) {
        if uid == 0 { return (.null, 1) }
        if let done = decoded[uid] { return done }
        if onPath.contains(uid) { return (.cycle(uid: uid), 1) }
        guard depth < limits.maxArchiveDepth else {
            throw PlistError(.tooDeep, "archived objects nest deeper than \(limits.maxArchiveDepth) levels")
        }
        let object = try archive.object(uid)
        onPath.insert(uid)
        defer { onPath.remove(uid) }
        let result = try decodeObject(object, uid: uid, depth: depth)
        decoded[uid] = result
        return result
    }

    /// Decodes a value found inside an object: a UID is followed, anything else is taken as it is.
    func fieldValue(_ object: Int, depth: Int) throws(PlistError) -> (value: ArchivedValue, size: Int) {
        let kind = try graph.kind(of: object)
        switch kind {
        case .uid: return try decode(uid: try graph.uid(object), depth: depth + 1)
        case .array, .set, .orderedSet, .dictionary:
            // Plain collections inside an object count toward the same depth limit as archived objects: a plist
            // collection that contains itself (found by fuzzing) would otherwise recurse until the stack overflows.
            guard depth < limits.maxArchiveDepth else {
                throw PlistError(.tooDeep, "archived values nest deeper than \(limits.maxArchiveDepth) levels (or a collection contains itself)")
            }
            return try collectionValue(object, kind: kind, depth: depth)
        default:
            return (try scalar(object, kind), 1)
        }
    }

    private func collectionValue(_ object: Int, kind: PlistKind, depth: Int) throws(PlistError) -> (value: ArchivedValue, size: Int) {
        switch kind {
        case .array, .set, .orderedSet:
            var elements: [ArchivedValue] = []
            var size = 1
            for index in 0..<(try graph.count(object)) {
                let element = try fieldValue(graph.element(object, index), depth: depth + 1)
                size = try grow(size, element.size)
                elements.append(element.value)
            }
            return (.array(elements), size)
        case .dictionary:
            var entries: [ArchivedEntry] = []
            var size = 1
            for index in 0..<(try graph.count(object)) {
                let key = try fieldValue(graph.key(object, index), depth: depth + 1)
                let value = try fieldValue(graph.value(object, index), depth: depth + 1)
                size = try grow(size, key.size + value.size)
                entries.append(ArchivedEntry(key: key.value, value: value.value))
            }
            return (.dictionary(entries), size)
        default:
            return (try scalar(object, kind), 1)
        }
    }

    /// Adds a child's expanded size, refusing archives that expand past the limit.
    func grow(_ size: Int, _ part: Int) throws(PlistError) -> Int {
        let total = size &+ part
        guard total > 0, total <= limits.maxExpandedValues else {
            throw PlistError(.tooLarge, "shared objects expand to more than \(limits.maxExpandedValues) values (a \"billion laughs\" archive)")
        }
        return total
    }

    func scalar(_ object: Int, _ kind: PlistKind) throws(PlistError) -> ArchivedValue {
        switch kind {
        case .null: return .null
        case .bool: return .bool(try graph.bool(object))
        case .integer:
            switch try graph.integer(object) {
            case .signed(let value): return .integer(value)
            case .unsigned(let value): return .unsigned(value)
            }
        case .real: return .real(try graph.real(object))
        case .date: return .date(try graph.date(object))
        case .data: return .data(try graph.data(object))
        case .string:
            // Foundation's unarchiver also turns a referenced "$null" string into nil.
            return try graph.string(object, equals: "$null") ? .null : .string(try graph.string(object))
        case .uid: return .null
        case .array, .set, .orderedSet, .dictionary: return .null
        }
    }

    private func decodeObject(_ object: Int, uid: Int, depth: Int) throws(PlistError) -> (value: ArchivedValue, size: Int) {
        let kind = try graph.kind(of: object)
        guard kind == .dictionary else {
            if kind == .uid { throw PlistError(.malformedArchive, "object \(uid) is itself a UID") }
            return try fieldValue(object, depth: depth)
        }
        guard let (archivedClass, classUID) = try classOf(object) else {
            // A dictionary without $class inside $objects: a plain dictionary.
            return try fieldValue(object, depth: depth)
        }
        let fields = ObjectFields(decoder: self, object: object, uid: uid, archivedClass: archivedClass, depth: depth)
        var size = 1
        let content = try fields.content(size: &size)
        _ = classUID
        return (.object(ArchivedObject(uid: uid, archivedClass: archivedClass, content: content)), size)
    }

    private func classOf(_ object: Int) throws(PlistError) -> (ArchivedClass, Int)? {
        guard let reference = try graph.lookup(object, "$class") else { return nil }
        guard try graph.kind(of: reference) == .uid else { throw PlistError(.malformedArchive, "a $class is not a UID") }
        let uid = try graph.uid(reference)
        if let known = classes[uid] { return (known, uid) }
        guard let (archivedClass, _) = try archive.archivedClass(ofObject: object) else { return nil }
        classes[uid] = archivedClass
        return (archivedClass, uid)
    }
}

/// Access to one archived object's fields while it is decoded into typed content.
struct ObjectFields<Graph: PlistGraph> {
    let decoder: ArchiveDecoder<Graph>
    let object: Int
    let uid: Int
    let archivedClass: ArchivedClass
    let depth: Int

    var graph: Graph { decoder.graph }

    /// The graph index of a field's value, if present.
    func raw(_ key: StaticString) throws(PlistError) -> Int? { try graph.lookup(object, key) }

    /// A field's decoded value (UIDs followed), adding its size.
    func value(_ key: StaticString, size: inout Int) throws(PlistError) -> ArchivedValue? {
        guard let raw = try raw(key) else { return nil }
        let result = try decoder.fieldValue(raw, depth: depth)
        size = try decoder.grow(size, result.size)
        return result.value
    }

    /// A field holding an integer (inline, or by UID to an integer object).
    func integer(_ key: StaticString) throws(PlistError) -> Int64? {
        var size = 0
        switch try value(key, size: &size) {
        case .integer(let number)?: return number
        case .real(let number)?: return Int64(exactly: number)
        case .bool(let flag)?: return flag ? 1 : 0
        default: return nil
        }
    }

    /// A field holding a number (inline, or by UID).
    func real(_ key: StaticString) throws(PlistError) -> Double? {
        var size = 0
        switch try value(key, size: &size) {
        case .real(let number)?: return number
        case .integer(let number)?: return Double(number)
        default: return nil
        }
    }

    /// A field holding a string (inline, by UID, or an NSString object).
    func string(_ key: StaticString) throws(PlistError) -> String? {
        var size = 0
        return try value(key, size: &size)?.stringValue
    }

    /// A field holding data (inline, or an NSData object).
    func data(_ key: StaticString) throws(PlistError) -> [UInt8]? {
        var size = 0
        switch try value(key, size: &size) {
        case .data(let bytes)?: return bytes
        case .object(let object)?:
            if case .data(let bytes) = object.content { return bytes }
            return nil
        default: return nil
        }
    }

    /// The elements of a field holding an array of UIDs (`NS.objects`, `NS.keys`).
    func elements(_ key: StaticString, size: inout Int) throws(PlistError) -> [ArchivedValue]? {
        guard let raw = try raw(key) else { return nil }
        guard [.array, .set, .orderedSet].contains(try graph.kind(of: raw)) else {
            throw malformed("\(key) is not an array")
        }
        var elements: [ArchivedValue] = []
        for index in 0..<(try graph.count(raw)) {
            let element = try decoder.fieldValue(graph.element(raw, index), depth: depth)
            size = try decoder.grow(size, element.size)
            elements.append(element.value)
        }
        return elements
    }

    /// Every field except `$class`, decoded, in archive order.
    func allFields(size: inout Int) throws(PlistError) -> [ArchivedField] {
        var fields: [ArchivedField] = []
        for index in 0..<(try graph.count(object)) {
            let key = try graph.key(object, index)
            guard try graph.kind(of: key) == .string else { throw malformed("a field name is not a string") }
            if try graph.string(key, equals: "$class") { continue }
            let value = try decoder.fieldValue(graph.value(object, index), depth: depth)
            size = try decoder.grow(size, value.size + 1)
            fields.append(ArchivedField(name: try graph.string(key), value: value.value))
        }
        return fields
    }

    func malformed(_ reason: String) -> PlistError {
        PlistError(.malformedArchive, "object \(uid) (\(archivedClass.name)): \(reason)")
    }
}
