import FerryCore

/// The record types seen in a set of records, with each field's type, and the zones they live in.
///
/// CloudKit fixes a field's type the first time it is saved; the schema enforces the same rule, so a record whose
/// field changes type is reported instead of being written.
public struct RecordSchema: Sendable, Hashable {
    /// Field types by field name, by record type.
    public private(set) var recordTypes: [String: [String: FieldType]] = [:]
    /// The zones records were seen in.
    public private(set) var zones: Set<ZoneID> = []

    /// Creates an empty schema.
    public init() {}

    /// Creates a schema from its parts.
    public init(recordTypes: [String: [String: FieldType]], zones: Set<ZoneID>) {
        self.recordTypes = recordTypes
        self.zones = zones
    }

    /// Fields whose type differs from what earlier records of the same type had.
    public func conflicts(in record: Record) -> [RecordProblem] {
        guard let known = recordTypes[record.recordType] else { return [] }
        var problems: [RecordProblem] = []
        for (name, value) in record.fields {
            guard let existing = known[name], !existing.accepts(value.type) else { continue }
            problems.append(
                RecordProblem(
                    .error, .fieldType, at: "fields.\(name)",
                    "field \"\(name)\" of \(record.recordType) was \(existing.tag) in earlier records, here \(value.type.tag); a field keeps one type"
                ))
        }
        return problems
    }

    /// Adds a record's type, fields and zone.
    ///
    /// Check ``conflicts(in:)`` first.
    public mutating func add(_ record: Record) {
        zones.insert(record.zoneID)
        var fields = recordTypes[record.recordType] ?? [:]
        for (name, value) in record.fields {
            let type = value.type
            if let existing = fields[name], existing != .list(nil) || type == .list(nil) { continue }
            fields[name] = type
        }
        recordTypes[record.recordType] = fields
    }

    /// Adds a deletion's type and zone.
    public mutating func add(_ deletion: Deletion) {
        zones.insert(deletion.zoneID)
        if recordTypes[deletion.recordType] == nil { recordTypes[deletion.recordType] = [:] }
    }

    /// The schema as JSON: `{"recordTypes": {"Car": {"fields": {"name": "STRING"}}}, "zones": [...]}`.
    public var jsonValue: JSONValue {
        var types: [JSONObject.Member] = []
        for (type, fields) in recordTypes {
            let fieldMembers = fields.map { JSONObject.Member(key: $0.key, value: .string($0.value.tag)) }
            types.append(JSONObject.Member(key: type, value: ["fields": .object(JSONObject(fieldMembers))]))
        }
        return [
            "recordTypes": .object(JSONObject(types)),
            "zones": .array(zones.sorted().map(\.jsonValue)),
        ]
    }

    /// Reads a schema written by ``jsonValue``.
    /// - Throws: ``RecordError`` naming what is malformed.
    public init(json: JSONValue) throws(RecordError) {
        guard let object = json.objectValue, let types = object["recordTypes"]?.objectValue,
            let zoneList = object["zones"]?.arrayValue
        else {
            throw RecordError(.invalidRecord, at: "", "a schema needs recordTypes (an object) and zones (an array)")
        }
        for member in types {
            guard let fields = member.value.objectValue?["fields"]?.objectValue else {
                throw RecordError(.invalidRecord, at: "recordTypes.\(member.key)", "expected {\"fields\": {...}}")
            }
            var fieldTypes: [String: FieldType] = [:]
            for field in fields {
                guard let tag = field.value.stringValue, let type = FieldType(tag: tag) else {
                    throw RecordError(.invalidRecord, at: "recordTypes.\(member.key).fields.\(field.key)", "expected a type tag")
                }
                fieldTypes[field.key] = type
            }
            recordTypes[member.key] = fieldTypes
        }
        let decoder = CloudKitJSONDecoder()
        for (index, zone) in zoneList.enumerated() {
            zones.insert(try decoder.decodeZoneID(zone, path: "zones[\(index)]"))
        }
    }
}
