import FerryCore
import FerryJSON

/// How a property list's JSON is laid out.
public enum PlistJSONStyle: Sendable, Hashable {
    /// One line, keys sorted, no spaces: `JSONWriter.value`.
    case canonical
    /// Two-space indentation from `indent` levels in, keys sorted: `JSONWriter.pretty`.
    case pretty(indent: Int)
}

/// A property list's JSON, measured and ready to be written in pieces (``PlistDocument/json(style:limits:)``).
public struct PlistJSONText {
    /// The exact number of bytes ``write(to:)`` hands over.
    public let byteCount: Int64
    private let body: (([UInt8]) throws -> Void) throws -> Void

    init<Graph: PlistGraph>(_ stream: PlistJSONStream<Graph>) {
        byteCount = stream.byteCount
        body = { emit in try stream.write(to: emit) }
    }

    /// Hands the JSON to `emit` in pieces of about 64 KiB, in order.
    public func write(to emit: ([UInt8]) throws -> Void) throws { try body(emit) }
}

extension PlistDocument {
    /// The plist's JSON form (that of ``PlistValue/jsonValue``), measured without building the tree.
    /// - Throws: ``PlistError`` for a cycle, nesting past the limit, a malformed object, or JSON longer than
    ///   `limits.maxJSONBytes` (shared objects are repeated wherever they are used).
    public func json(style: PlistJSONStyle, limits: PlistLimits = PlistLimits()) throws(PlistError) -> PlistJSONText {
        try Self.json(graph, style: style, limits: limits)
    }

    private static func json<Graph: PlistGraph>(_ graph: Graph, style: PlistJSONStyle, limits: PlistLimits) throws(PlistError)
        -> PlistJSONText
    {
        PlistJSONText(try PlistJSONStream(graph, style: style, limits: limits))
    }
}

/// Writes a property list's JSON form (``PlistValue/jsonValue``) straight from its graph, in pieces, never holding the
/// tree or the text whole.
///
/// A plist may share one object from many places; its JSON repeats the object at each of them, so a few hundred bytes
/// can stand for gigabytes of text. Before anything is written the exact size of the output is worked out, once per
/// object, and a document past ``PlistLimits/maxJSONBytes`` is refused, naming the object repeated most and how often.
/// The bytes are those of `JSONWriter.value` (canonical) or `JSONWriter.pretty` (two-space indentation) of the tree.
struct PlistJSONStream<Graph: PlistGraph> {
    let graph: Graph
    let style: PlistJSONStyle
    let limits: PlistLimits
    private var sizes: [Int: JSONSize] = [:]
    private var onPath: Set<Int> = []

    /// Measures the document from `graph`'s top object.
    /// - Throws: ``PlistError`` for a cycle, nesting past the limit, a malformed object, or output past the limit.
    init(_ graph: Graph, style: PlistJSONStyle, limits: PlistLimits = PlistLimits()) throws(PlistError) {
        self.graph = graph
        self.style = style
        self.limits = limits
        let size = try measure(graph.topObject, depth: 0)
        byteCount = size.bytes(style)
        if byteCount > limits.maxJSONBytes {
            let (object, times) = try mostRepeated()
            throw PlistError(
                .tooLarge,
                "its JSON would be \(QuantityText.binaryBytes(byteCount)), more than the limit of \(QuantityText.binaryBytes(limits.maxJSONBytes)) "
                    + "(--max-output raises it): shared objects are written out at every place they are used, and object "
                    + "\(object) (\(try describe(object))) is used \(times) times")
        }
    }

    /// The exact number of bytes ``write(to:)`` hands over.
    private(set) var byteCount: Int64 = 0

    /// Hands the JSON to `emit` in pieces of about 64 KiB, in order.
    func write(to emit: ([UInt8]) throws -> Void) throws {
        try withoutActuallyEscaping(emit) { emit in
            // `Output` keeps `emit` only while this call runs.
            var output = Output(writer: JSONWriter(capacity: (1 << 16) + 4096), emit: emit)
            try write(graph.topObject, indent: style.indent, into: &output)
            try emit(output.writer.bytes)
        }
    }

    // MARK: - Measuring

    private mutating func measure(_ object: Int, depth: Int) throws(PlistError) -> JSONSize {
        if let size = sizes[object] { return size }
        let kind = try graph.kind(of: object)
        let size: JSONSize
        if kind.isContainer {
            guard depth < limits.maxDepth else { throw PlistError(.tooDeep, "containers nest deeper than \(limits.maxDepth) levels") }
            guard onPath.insert(object).inserted else { throw PlistError(.cycle, "object \(object) contains itself") }
            defer { onPath.remove(object) }
            let count = try graph.count(object)
            if count == 0 {
                size = JSONSize(fixed: 2, perLevel: 0, canonical: 2)
            } else {
                // Brackets and commas; pretty adds a line break before each member (one level in) and the closer.
                let n = Int64(count)
                var canonical = 2 &+ (n &- 1)
                var fixed = canonical &+ n &* 3 &+ 1
                var perLevel = 2 &* n &+ 2
                for index in 0..<count {
                    if kind == .dictionary {
                        let key = try graph.key(object, index)
                        guard try graph.kind(of: key) == .string else {
                            throw PlistError(.malformed, "dictionary \(object) has a key that is not a string")
                        }
                        let keyBytes = Self.stringBytes(try graph.string(key))
                        canonical = canonical &+ keyBytes &+ 1
                        fixed = fixed &+ keyBytes &+ 2
                    }
                    let child = try measure(kind == .dictionary ? graph.value(object, index) : graph.element(object, index), depth: depth + 1)
                    canonical = Self.add(canonical, child.canonical)
                    fixed = Self.add(fixed, Self.add(child.fixed, child.perLevel))
                    perLevel = Self.add(perLevel, child.perLevel)
                }
                size = JSONSize(fixed: fixed, perLevel: perLevel, canonical: canonical)
            }
        } else if kind == .uid {
            // {"$uid": n}: an object of one member.
            let member = Int64(JSONWriter.canonical(.string("$uid")).count) + Int64(String(try graph.uid(object)).utf8.count)
            size = JSONSize(fixed: 2 + 3 + 1 + member + 2, perLevel: 4, canonical: 2 + member + 1)
        } else {
            var writer = JSONWriter()
            try scalar(object, kind, into: &writer)
            size = JSONSize(fixed: Int64(writer.count), perLevel: 0, canonical: Int64(writer.count))
        }
        sizes[object] = size
        return size
    }

    /// Adds sizes, staying at `Int64.max` past it (a count that large is refused anyway).
    private static func add(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow || sum < 0 ? .max : sum
    }

    private static func stringBytes(_ text: String) -> Int64 { Int64(JSONWriter.canonical(.string(text)).count) }

    /// The object that appears most often in the expanded document, weighed by its own bytes, and how many times.
    private func mostRepeated() throws(PlistError) -> (object: Int, times: Int64) {
        // Objects in reverse post-order (parents before children), then the number of paths from the top to each.
        var order: [Int] = []
        var visited: Set<Int> = []
        var stack: [(object: Int, next: Int)] = [(graph.topObject, 0)]
        visited.insert(graph.topObject)
        while let top = stack.last {
            let children = try self.children(of: top.object)
            if top.next < children.count {
                stack[stack.count - 1].next += 1
                let child = children[top.next]
                if visited.insert(child).inserted { stack.append((child, 0)) }
            } else {
                order.append(top.object)
                stack.removeLast()
            }
        }
        var paths: [Int: Int64] = [graph.topObject: 1]
        for object in order.reversed() {
            let times = paths[object] ?? 0
            for child in try children(of: object) { paths[child] = Self.add(paths[child] ?? 0, times) }
        }
        var best = (object: graph.topObject, times: Int64(1), weight: Int64(0))
        for (object, times) in paths where times > 1 {
            let size = sizes[object] ?? JSONSize(fixed: 1, perLevel: 0, canonical: 1)
            let own = try graph.kind(of: object).isContainer ? 2 &+ Int64(try graph.count(object)) : size.canonical
            let (weight, overflow) = times.multipliedReportingOverflow(by: max(own, 1))
            let weighed = overflow ? Int64.max : weight
            if weighed > best.weight || (weighed == best.weight && object < best.object) { best = (object, times, weighed) }
        }
        return (best.object, best.times)
    }

    private func children(of object: Int) throws(PlistError) -> [Int] {
        let kind = try graph.kind(of: object)
        guard kind.isContainer else { return [] }
        let count = try graph.count(object)
        var result: [Int] = []
        result.reserveCapacity(count)
        for index in 0..<count { result.append(kind == .dictionary ? try graph.value(object, index) : try graph.element(object, index)) }
        return result
    }

    private func describe(_ object: Int) throws(PlistError) -> String {
        let kind = try graph.kind(of: object)
        switch kind {
        case .array, .set, .orderedSet:
            return "\(kind == .array ? "an array" : kind == .set ? "a set" : "an ordered set") of \(try graph.count(object)) values"
        case .dictionary: return "a dictionary of \(try graph.count(object)) entries"
        case .string: return "a string of \(try graph.string(object).utf8.count) bytes"
        case .data: return "data of \(try graph.data(object).count) bytes"
        default: return "a \(kind.rawValue)"
        }
    }

    // MARK: - Writing

    /// The writer and where its bytes go once it holds 64 KiB.
    private struct Output {
        var writer: JSONWriter
        let emit: ([UInt8]) throws -> Void

        mutating func flushIfFull() throws {
            guard writer.count >= 1 << 16 else { return }
            try emit(writer.bytes)
            writer.reset()
        }

        mutating func newline(_ indent: Int) {
            writer.byte(UInt8(ascii: "\n"))
            for _ in 0..<indent { writer.raw("  ") }
        }
    }

    private func write(_ object: Int, indent: Int?, into output: inout Output) throws {
        let kind = try graph.kind(of: object)
        switch kind {
        case .array, .set, .orderedSet:
            let count = try graph.count(object)
            guard count > 0 else { return output.writer.raw("[]") }
            output.writer.byte(UInt8(ascii: "["))
            for index in 0..<count {
                if index > 0 { output.writer.byte(UInt8(ascii: ",")) }
                if let indent { output.newline(indent + 1) }
                try write(try graph.element(object, index), indent: indent.map { $0 + 1 }, into: &output)
                try output.flushIfFull()
            }
            if let indent { output.newline(indent) }
            output.writer.byte(UInt8(ascii: "]"))
        case .dictionary:
            let count = try graph.count(object)
            guard count > 0 else { return output.writer.raw("{}") }
            // Keys in UTF-8 byte order, as JSONWriter writes objects.
            var entries: [(key: String, value: Int)] = []
            entries.reserveCapacity(count)
            for index in 0..<count { entries.append((try graph.string(try graph.key(object, index)), try graph.value(object, index))) }
            entries.sort { JSONWriter.keyPrecedes($0.key, $1.key) }
            output.writer.byte(UInt8(ascii: "{"))
            for (index, entry) in entries.enumerated() {
                if index > 0 { output.writer.byte(UInt8(ascii: ",")) }
                if let indent { output.newline(indent + 1) }
                output.writer.string(entry.key)
                if indent == nil { output.writer.byte(UInt8(ascii: ":")) } else { output.writer.raw(": ") }
                try write(entry.value, indent: indent.map { $0 + 1 }, into: &output)
                try output.flushIfFull()
            }
            if let indent { output.newline(indent) }
            output.writer.byte(UInt8(ascii: "}"))
        case .uid:
            let value: JSONValue = ["$uid": .integer(Int64(try graph.uid(object)))]
            if let indent { output.writer.pretty(value, indent: indent) } else { output.writer.value(value) }
        default:
            try scalar(object, kind, into: &output.writer)
        }
    }

    /// A scalar's JSON, as ``PlistValue/jsonValue`` gives it.
    private func scalar(_ object: Int, _ kind: PlistKind, into writer: inout JSONWriter) throws(PlistError) {
        switch kind {
        case .null: writer.raw("null")
        case .bool: writer.bool(try graph.bool(object))
        case .integer:
            switch try graph.integer(object) {
            case .signed(let value): writer.integer(value)
            case .unsigned(let value): writer.value(.unsigned(value))
            }
        case .real:
            let number = try graph.real(object)
            if number.isFinite { writer.double(number) } else { writer.string("\(number)") }
        case .date: writer.string(PlistValue.iso8601(try graph.date(object)))
        case .data: writer.base64(try graph.data(object))
        case .string: writer.string(try graph.string(object))
        case .uid, .array, .set, .orderedSet, .dictionary: writer.raw("null")
        }
    }
}

extension PlistJSONStyle {
    /// The indentation level of the top value; `nil` for one line.
    var indent: Int? {
        switch self {
        case .canonical: nil
        case .pretty(let indent): indent
        }
    }

}

/// The size of an object's JSON: `fixed + perLevel × indent` bytes pretty-printed at `indent`, `canonical` on one line.
private struct JSONSize {
    var fixed: Int64
    var perLevel: Int64
    var canonical: Int64

    /// The bytes in a layout, staying at `Int64.max` past it.
    func bytes(_ style: PlistJSONStyle) -> Int64 {
        switch style {
        case .canonical: return canonical
        case .pretty(let indent):
            let (extra, overflow) = perLevel.multipliedReportingOverflow(by: Int64(indent))
            guard !overflow else { return .max }
            let (sum, overflowSum) = fixed.addingReportingOverflow(extra)
            return overflowSum ? .max : sum
        }
    }
}
