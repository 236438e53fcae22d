import FerryCore
import FerryJSON

/// The record types seen in a set of records, with each field's type, and the zones they live in.
///
/// CloudKit fixes a field's type the first time it is saved; the schema enforces the same rule, so a record whose
/// field changes type is reported instead of being written.
public struct RecordSchema: Sendable, Hashable {
    /// Field types by field name, by record type.
    public private(set) var recordTypes: [String: [String: FieldType]] = [:]
    /// The zones records were seen in (none when the schema does not track them, see ``init(tracksZones:)``).
    public private(set) var zones: Set<ZoneID> = []
    /// Whether ``zones`` is kept.
    public let tracksZones: Bool
    /// Layouts (type, field names and types) already added: records with a known layout need no checks.
    private var knownLayouts: Set<Layout> = []

    /// A record's layout, as a 64-bit hash of its type and its field names and types.
    ///
    /// Computed where records are prepared (on any thread), so that the schema checks of the many records sharing a
    /// layout cost one set lookup. A set holds a few layouts per record type, so 64 bits keep a collision (which would
    /// skip one record's checks) below 10⁻¹³ even for thousands of layouts. The hash is over bytes, so a layout is the
    /// same whether made from a record or from the bytes ``CanonicalRecordScanner`` saw.
    public struct Layout: Sendable, Hashable {
        private let hash: Int

        /// The layout of a record.
        public init(of record: Record) {
            var hasher = Self.hasher(recordType: record.recordType)
            for field in record.fields {
                field.name.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                hasher.combine(0 as UInt8)
                field.value.type.tag.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
                hasher.combine(0 as UInt8)
            }
            hash = hasher.finalize()
        }

        /// The layout of a record of this type whose field names and type tags are `fields`, each followed by a 0
        /// byte: what ``CanonicalRecordScanner`` collects from a line.
        public init(recordType: String, fields: [UInt8]) {
            var hasher = Self.hasher(recordType: recordType)
            fields.withUnsafeBytes { hasher.combine(bytes: $0) }
            hash = hasher.finalize()
        }

        private static func hasher(recordType: String) -> Hasher {
            var hasher = Hasher()
            hasher.combine(0x1A70_0003 as UInt32)
            recordType.withUTF8Bytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(0xFF as UInt8)
            return hasher
        }
    }

    public static func == (lhs: RecordSchema, rhs: RecordSchema) -> Bool {
        lhs.recordTypes == rhs.recordTypes && lhs.zones == rhs.zones
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(recordTypes)
        hasher.combine(zones)
    }

    /// Creates an empty schema.
    /// - Parameter tracksZones: whether to keep the zones of the records added (`false` for a writer that lists them
    ///   apart: a bundle may have hundreds of thousands).
    public init(tracksZones: Bool = true) {
        self.tracksZones = tracksZones
    }

    /// Creates a schema from its parts.
    public init(recordTypes: [String: [String: FieldType]], zones: Set<ZoneID>) {
        self.recordTypes = recordTypes
        self.zones = zones
        tracksZones = true
    }

    /// Whether records of this layout were added: they need no schema checks.
    public func knows(_ layout: Layout) -> Bool { knownLayouts.contains(layout) }

    /// Fields whose type differs from what earlier records of the same type had.
    /// - Parameter layout: the record's layout, if known; a layout already added has no conflicts.
    public func conflicts(in record: Record, layout: Layout? = nil) -> [RecordProblem] {
        if let layout, knownLayouts.contains(layout) { return [] }
        guard let known = recordTypes[record.recordType] else { return [] }
        var problems: [RecordProblem] = []
        for field in record.fields {
            let name = field.name
            let value = field.value
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
    /// Check ``conflicts(in:layout:)`` first.
    /// - Parameter layout: the record's layout, if known; adding a known layout again costs one lookup.
    public mutating func add(_ record: Record, layout: Layout? = nil) {
        if tracksZones { zones.insert(record.zoneID) }
        if let layout, !knownLayouts.insert(layout).inserted { return }
        // Modify the type's field map in place (no copy of the dictionary).
        recordTypes[record.recordType, default: [:]].merge(record.fields.lazy.map { ($0.name, $0.value.type) }) { existing, new in
            existing == FieldType.list(nil) ? new : existing
        }
    }

    /// Adds a deletion's type and zone.
    public mutating func add(_ deletion: Deletion) {
        addDeletion(recordType: deletion.recordType, zoneID: deletion.zoneID)
    }

    /// Adds the type and zone of a deletion.
    public mutating func addDeletion(recordType: String, zoneID: ZoneID) {
        if tracksZones { zones.insert(zoneID) }
        if recordTypes[recordType] == nil { recordTypes[recordType] = [:] }
    }

    /// The schema as JSON: `{"recordTypes": {"Car": {"fields": {"name": "STRING"}}}, "zones": [...]}`.
    public var jsonValue: JSONValue {
        ["recordTypes": typesJSON, "zones": .array(zones.sorted().map(\.jsonValue))]
    }

    /// Hands ``jsonValue`` pretty-printed to `emit` in pieces, zone by zone (a bundle may hold many), never holding it
    /// whole.
    public func writePretty(_ emit: ([UInt8]) throws -> Void) throws {
        try writePretty(zones: { add in for zone in zones.sorted() { try add(zone) } }, emit)
    }

    /// Hands the schema pretty-printed to `emit` in pieces, with the zones `zones` hands over (sorted, each once)
    /// instead of its own: for a writer that keeps them apart.
    public func writePretty(zones: ((ZoneID) throws -> Void) throws -> Void, _ emit: ([UInt8]) throws -> Void) throws {
        try JSONWriter.prettyDocument(["recordTypes": typesJSON], streaming: "zones", to: emit) { add in
            // Both closures end with this call.
            try withoutActuallyEscaping(add) { add in try zones { try add($0.jsonValue) } }
        }
    }

    private var typesJSON: JSONValue {
        var types: [JSONObject.Member] = []
        for (type, fields) in recordTypes {
            let fieldMembers = fields.map { JSONObject.Member(key: $0.key, value: .string($0.value.tag)) }
            types.append(JSONObject.Member(key: type, value: ["fields": .object(JSONObject(fieldMembers))]))
        }
        return .object(JSONObject(types))
    }

    /// Reads a schema written by ``jsonValue``.
    /// - Throws: ``RecordError`` naming what is malformed.
    public init(json: JSONValue) throws(RecordError) {
        try self.init(json: json, zones: nil)
    }

    /// Reads a schema from its bytes: see ``init(reading:zones:)``.
    public init(bytes: [UInt8]) throws {
        try self.init(reading: ByteArrayReader(bytes).read)
    }

    /// Reads a schema as its bytes are read, zone by zone, never holding the document (a bundle may hold hundreds of
    /// thousands of zones).
    /// - Parameters:
    ///   - read: fills a buffer with the next bytes and returns their count (0 at the end).
    ///   - zones: receives each zone listed, in the order listed; the schema then does not keep them (it does not
    ///     track zones). Without it, the schema keeps them.
    /// - Throws: ``RecordError`` naming what is malformed, `JSONSyntaxError` for bytes that are not JSON, or what
    ///   `read` or `zones` throws.
    package init(reading read: (UnsafeMutableRawBufferPointer) throws -> Int, zones handOver: ((ZoneID) throws -> Void)? = nil) throws {
        let decoder = CloudKitJSONDecoder()
        var zones: Set<ZoneID> = []
        let object = try JSONParser.parseObject(reading: read, streaming: "zones") { value, index in
            let zone = try decoder.decodeZoneID(value, path: "zones[\(index)]")
            if let handOver { try handOver(zone) } else { zones.insert(zone) }
        }
        guard let object else {
            throw RecordError(.invalidRecord, at: "", "a schema needs recordTypes (an object) and zones (an array)")
        }
        try self.init(json: .object(object), zones: object["zones"]?.arrayValue == nil ? nil : zones, tracksZones: handOver == nil)
    }

    /// Reads a schema, with its zones already read when `zones` is given.
    private init(json: JSONValue, zones decoded: Set<ZoneID>?, tracksZones: Bool = true) throws(RecordError) {
        self.tracksZones = tracksZones
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
        if let decoded {
            zones = decoded
            return
        }
        let decoder = CloudKitJSONDecoder()
        for (index, zone) in zoneList.enumerated() {
            zones.insert(try decoder.decodeZoneID(zone, path: "zones[\(index)]"))
        }
    }
}
