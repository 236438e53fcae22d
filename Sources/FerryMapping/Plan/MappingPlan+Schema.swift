import Yams

/// The shape of a mapping plan file, checked key by key before the plan is decoded, so that a mistake is named with
/// its file, line and column instead of being ignored (`nmae:`) or reported as a decoding path.
///
/// Written by hand because Codable ignores unknown keys and its errors carry no position; Yams's node tree has both
/// the keys and their marks.
enum MappingPlanSchema {
    /// What a value must be.
    indirect enum Shape: Sendable {
        case string
        /// A string or null.
        case optionalString
        case bool
        case oneOf([String])
        case strings
        /// A mapping with these keys (all optional).
        case mapping([String: Shape])
        /// A mapping from names chosen by the user (entities, properties) to values of one shape.
        case dictionary(of: Shape)
    }

    static let field: Shape = .mapping([
        "rename": .string, "asset": .bool, "action": .oneOf(["NONE", "DELETE_SELF", "VALIDATE"]),
        "convert": .oneOf(["string", "double", "bytes", "rgba"]), "list": .bool,
    ])

    static let entity: Shape = .mapping([
        "skip": .bool, "recordType": .string, "zone": .string, "zoneFrom": .strings,
        "name": .mapping(["archivedRecordID": .string, "systemFields": .string, "attribute": .string, "addPrefix": .bool]),
        "exclude": .strings, "fields": .dictionary(of: field),
        "tombstone": .mapping(["recordID": .string, "recordName": .string, "recordType": .string]),
    ])

    static let plan: Shape = .mapping([
        "preset": .optionalString, "separator": .string, "zone": .optionalString,
        "style": .oneOf(["cloudkit", MappingPlan.coreDataMirrorStyle]), "entities": .dictionary(of: entity),
    ])

    /// Keys people write for another one.
    static let synonyms = [
        "properties": "fields", "attributes": "fields", "relationships": "fields", "type": "recordType", "record_type": "recordType",
        "recordName": "name", "ignore": "skip", "excluded": "exclude", "parentZone": "zoneFrom", "delete": "action",
    ]

    /// Checks a plan's text against the schema.
    /// - Throws: ``MappingError/Code/invalidPlan`` naming `file:line:column`, the key, and what is accepted there.
    static func check(_ yaml: String, file: String) throws(MappingError) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            if case .duplicatedKeysInMapping(let duplicates, let context) = error as? YamlError {
                throw MappingError(
                    .invalidPlan,
                    "\(file):\(context.mark.line):\(context.mark.column): \(duplicates.joined(separator: ", ")) given twice in one "
                        + "mapping; keep one", cause: error)
            }
            if let yamlError = error as? YamlError { throw MappingError(.invalidPlan, "\(file):\(yamlError)", cause: yamlError) }
            throw MappingError(.invalidPlan, "\(file): not YAML: \(error)", cause: error)
        }
        guard let root else { throw MappingError(.invalidPlan, "\(file): the plan is empty; write one with ferry plan STORE > \(file)") }
        try check(root, against: plan, path: [], file: file)
    }

    private static func check(_ node: Node, against shape: Shape, path: [String], file: String) throws(MappingError) {
        func fail(_ message: String, at other: Node? = nil) -> MappingError {
            let place = (other ?? node).mark.map { "\(file):\($0.line):\($0.column)" } ?? file
            return MappingError(.invalidPlan, "\(place): \(message)")
        }
        let name = path.isEmpty ? "the plan" : path.joined(separator: ".")
        let key = path.last ?? "the plan"
        if node.null != nil, case .optionalString = shape { return }
        // A key written with no value (`skip:`) reads as null: the same as leaving it out.
        if node.null != nil, !path.isEmpty { return }
        switch shape {
        case .string, .optionalString:
            guard case .scalar = node else { throw fail("\(key) must be a text value (\(name))") }
        case .bool:
            guard case .scalar = node, node.bool != nil else {
                throw fail("\(key) must be true or false, not \(describe(node)) (\(name))")
            }
        case .oneOf(let accepted):
            guard case .scalar(let scalar) = node, accepted.contains(scalar.string) else {
                let suggestion = node.string.flatMap { closest($0, among: accepted) }.map { "; did you mean \($0)?" } ?? ""
                throw fail("\(key) must be one of \(accepted.joined(separator: ", ")), not \(describe(node))\(suggestion) (\(name))")
            }
        case .strings:
            switch node {
            case .sequence(let sequence):
                for element in sequence {
                    guard case .scalar = element, element.null == nil else { throw fail("\(key) must list names (\(name))", at: element) }
                }
            case .scalar:
                throw fail("\(key) must be a list, such as [\(node.string ?? "name")] (\(name))")
            default:
                throw fail("\(key) must be a list of names (\(name))")
            }
        case .mapping(let keys):
            guard case .mapping(let mapping) = node else {
                throw fail("\(key) must be a mapping of \(keys.keys.sorted().joined(separator: ", ")), not \(describe(node)) (\(name))")
            }
            for (keyNode, value) in mapping {
                let text = keyNode.string ?? ""
                guard let inner = keys[text] else {
                    let accepted = keys.keys.sorted()
                    let suggestion = closest(text, among: accepted).map { "did you mean \($0)? " } ?? ""
                    throw fail(
                        "unknown key \(text) in \(name); \(suggestion)accepted keys: \(accepted.joined(separator: ", "))", at: keyNode)
                }
                try check(value, against: inner, path: path + [text], file: file)
            }
        case .dictionary(let inner):
            guard case .mapping(let mapping) = node else { throw fail("\(key) must be a mapping of names (\(name))") }
            for (keyNode, value) in mapping {
                guard let text = keyNode.string, !text.isEmpty else { throw fail("a name in \(name) is empty", at: keyNode) }
                try check(value, against: inner, path: path + [text], file: file)
            }
        }
    }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): return scalar.string.isEmpty ? "an empty value" : "\(scalar.string)"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    /// The accepted word nearest `word` (a known synonym, the same letters in another case, or at most half of
    /// its letters away), if any.
    static func closest(_ word: String, among accepted: [String]) -> String? {
        if let synonym = synonyms[word], accepted.contains(synonym) { return synonym }
        if let sameLetters = accepted.first(where: { $0.lowercased() == word.lowercased() }) { return sameLetters }
        let scored = accepted.map { ($0, distance(word.lowercased(), $0.lowercased())) }.min { $0.1 < $1.1 }
        guard let (best, score) = scored, score <= max(1, min(word.count, best.count) / 2) else { return nil }
        return best
    }

    /// The Levenshtein distance between two words.
    static func distance(_ lhs: String, _ rhs: String) -> Int {
        let (a, b) = (Array(lhs), Array(rhs))
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for (i, left) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, right) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
