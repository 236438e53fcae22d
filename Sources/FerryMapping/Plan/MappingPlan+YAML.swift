import FerryCore
import FerryJSON
import Yams

extension MappingPlan {
    /// Reads a plan from YAML.
    /// - Parameter file: what to name in errors.
    /// - Throws: ``MappingError`` (`invalid-plan`) naming the file, line and column, and what is accepted there.
    public static func decode(yaml: String, file: String) throws(MappingError) -> MappingPlan {
        // Unknown keys and values of the wrong kind, with their line and column (Codable ignores the first).
        try MappingPlanSchema.check(yaml, file: file)
        do {
            return try YAMLDecoder().decode(MappingPlan.self, from: yaml)
        } catch let error as DecodingError {
            // YAML that does not parse: Yams's own message names the line and column and shows them.
            if case .dataCorrupted(let context) = error, let yaml = context.underlyingError as? YamlError {
                throw MappingError(.invalidPlan, "\(file):\(yaml)", cause: yaml)
            }
            throw MappingError(.invalidPlan, "\(file): \(Self.describe(error))", cause: error)
        } catch {
            throw MappingError(.invalidPlan, "\(file): not a mapping plan: \(error)", cause: error)
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "at \(path(context).isEmpty ? "the top" : path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "at \(path(context).isEmpty ? "the top" : path(context)): \"\(key.stringValue)\" is required"
        @unknown default:
            return "\(error)"
        }
    }

    /// The plan as YAML a person can edit: every entity, every choice spelled out, with comments.
    /// - Parameters:
    ///   - header: comment lines for the top of the file.
    ///   - describe: comment lines for an entity (its properties, counts), by entity name.
    public func yaml(header: [String] = [], describe: (String) -> [String] = { _ in [] }) -> String {
        var lines = header.map { "# \($0)" }
        if !header.isEmpty { lines.append("") }
        if let preset { lines.append("preset: \(Self.quoted(preset))") }
        lines.append("# Between the record type and the identifier of names Ferry makes (Car.<UUID>).")
        lines.append("separator: \(Self.quoted(separator))")
        lines.append("# The zone of records whose entity names none (default: _defaultZone).")
        lines.append("zone: \(zone.map(Self.quoted) ?? "null")")
        lines.append("# The record layout: cloudkit, or nspersistentcloudkitcontainer (CD_ types and fields, CDMR records).")
        lines.append(style.map { "style: \(Self.quoted($0))" } ?? "# style: \"cloudkit\"")
        lines += Self.entityKeysComment
        lines.append("entities:")
        for name in entities.keys.sorted() {
            guard let entity = entities[name] else { continue }
            lines.append("")
            for comment in describe(name) { lines.append("  # \(comment)") }
            lines.append("  \(Self.quoted(name)):")
            lines += Self.lines(entity).map { "    \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func lines(_ entity: EntityPlan) -> [String] {
        var lines: [String] = []
        if entity.skip == true { lines.append("skip: true") }
        if let tombstone = entity.tombstone {
            lines.append("# Each row deletes the record it names.")
            lines.append("tombstone:")
            if let recordID = tombstone.recordID { lines.append("  recordID: \(quoted(recordID))") }
            if let recordName = tombstone.recordName { lines.append("  recordName: \(quoted(recordName))") }
            if let recordType = tombstone.recordType { lines.append("  recordType: \(quoted(recordType))") }
            return lines
        }
        if let recordType = entity.recordType { lines.append("recordType: \(quoted(recordType))") }
        if let zone = entity.zone { lines.append("zone: \(quoted(zone))") }
        if let zoneFrom = entity.zoneFrom {
            lines.append("# The zone of the parent (a reference cannot cross zones).")
            lines.append("zoneFrom: [\(zoneFrom.map(quoted).joined(separator: ", "))]")
        }
        if let name = entity.name {
            lines.append("# The record name: kept from the first of these that has a value, else made deterministic.")
            lines.append("name:")
            if let value = name.systemFields { lines.append("  systemFields: \(quoted(value))") }
            if let value = name.archivedRecordID { lines.append("  archivedRecordID: \(quoted(value))") }
            if let value = name.attribute { lines.append("  attribute: \(quoted(value))") }
            if let value = name.addPrefix { lines.append("  addPrefix: \(value)") }
        }
        if let exclude = entity.exclude { lines.append("exclude: [\(exclude.map(quoted).joined(separator: ", "))]") }
        if let fields = entity.fields, !fields.isEmpty {
            lines.append("fields:")
            for key in fields.keys.sorted() {
                guard let field = fields[key] else { continue }
                var parts: [String] = []
                if let rename = field.rename { parts.append("rename: \(quoted(rename))") }
                if let asset = field.asset { parts.append("asset: \(asset)") }
                if let action = field.action { parts.append("action: \(quoted(action))") }
                if let convert = field.convert { parts.append("convert: \(quoted(convert))") }
                if let list = field.list { parts.append("list: \(list)") }
                lines.append("  \(quoted(key)): {\(parts.joined(separator: ", "))}")
            }
        }
        if lines.isEmpty { lines.append("{}") }
        return lines
    }

    /// Every key an entity's plan may have, as comments before the entities (the file is where people edit it).
    static let entityKeysComment: [String] = {
        let keys: [(String, String)] = [
            ("skip: true", "leave its objects out"),
            ("recordType: \"Type\"", "the record type (default: the entity name)"),
            ("zone: \"Zone\"", "its records' zone (default: the plan's zone)"),
            ("zoneFrom: [\"parent\"]", "to-one relationships whose record's zone it shares, tried in order"),
            ("name:", "the record name, from the first of these with a value, else deterministic:"),
            ("  archivedRecordID: \"attr\"", "an attribute holding an archived CKRecordID"),
            ("  systemFields: \"attr\"", "an attribute holding a CKRecord's system fields (keeps the change tag)"),
            ("  attribute: \"attr\"", "a string attribute"),
            ("  addPrefix: true", "put <recordType><separator> before a name from attribute that lacks it"),
            ("exclude: [\"attr\"]", "attributes and relationships not written"),
            ("tombstone:", "each row deletes the record it names: recordID, recordName, recordType (attributes)"),
            ("fields:", "per attribute or relationship, for example:"),
            ("  \"photo\": {rename: \"image\", asset: true}", "another field name; binary data as an ASSET"),
            ("  \"owner\": {action: \"DELETE_SELF\"}", "a reference's action: NONE, DELETE_SELF or VALIDATE"),
            ("  \"price\": {convert: \"string\"}", "a conversion: string, double, bytes or rgba"),
            ("  \"tags\": {list: true}", "this side holds a many-to-many (or one-to-one) relationship"),
        ]
        let width = keys.map(\.0.count).max() ?? 0
        return ["# Per entity (any key may be left out; an entity left out is mapped with the defaults):"]
            + keys.map { key, text in "#   " + key + String(repeating: " ", count: width - key.count + 2) + text }
    }()

    /// A YAML double-quoted scalar (JSON string syntax is valid YAML).
    static func quoted(_ text: String) -> String {
        var writer = JSONWriter()
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
