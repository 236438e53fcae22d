import FerryCore

/// Decodes records and deletions from CloudKit Web Services record dictionaries.
///
/// Accepts what CloudKit and its clients write: type tags on fields or none (then the type is inferred), `*_LIST` and
/// bare `LIST` tags, numbers as strings (`numbersAsStrings`), `ownerName` for `ownerRecordName`, and response-only
/// keys (`pluginFields`, `shortGUID`, `zoneType`), which are dropped. A record with `"deleted": true` is a deletion.
///
/// ```swift
/// let decoder = CloudKitJSONDecoder()
/// let change = try decoder.decode(line: bytes)   // .record(...) or .deletion(...)
/// ```
public struct CloudKitJSONDecoder: Sendable {
    /// Where an `ASSET` field whose value names a file (`{"path": "photos/1.jpg"}`) finds it.
    public typealias AssetResolver = @Sendable (_ path: String, _ fileName: String?) throws -> Asset

    /// Resolves `path`-form assets; without one such assets are an error.
    public var assetResolver: AssetResolver?

    /// Creates a decoder.
    public init(assetResolver: AssetResolver? = nil) {
        self.assetResolver = assetResolver
    }

    /// Decodes one NDJSON line (a record dictionary).
    /// - Throws: ``RecordError`` saying what is wrong and where.
    public func decode(line: UnsafeRawBufferPointer) throws(RecordError) -> RecordChange {
        let json: JSONValue
        do {
            json = try JSONParser.parse(line)
        } catch {
            throw RecordError(.invalidJSON, at: "", "not valid JSON \(error)")
        }
        return try decode(json)
    }

    /// Decodes one record dictionary from bytes.
    public func decode(bytes: [UInt8]) throws(RecordError) -> RecordChange {
        do {
            return try bytes.withUnsafeBytes { buffer throws(RecordError) in try decode(line: buffer) }
        } catch let error as RecordError {
            throw error
        } catch {
            throw RecordError(.invalidJSON, at: "", "\(error)")
        }
    }

    /// Decodes a record dictionary.
    /// - Throws: ``RecordError`` saying what is wrong and where.
    public func decode(_ json: JSONValue) throws(RecordError) -> RecordChange {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: "", "expected a record object, found \(json.typeName)")
        }
        for member in object where !Self.recordKeys.contains(member.key) {
            if Self.sharingKeys.contains(member.key) {
                if member.value == .null { continue }
                throw RecordError(
                    .unsupported, at: member.key,
                    "CloudKit sharing (parent/share) is not supported yet; remove the key to copy the record without it")
            }
            throw RecordError(
                .invalidRecord, at: member.key,
                "unknown record key; expected one of \(Self.recordKeys.sorted().joined(separator: ", "))")
        }
        let recordName = try requiredString(object, "recordName", path: "")
        let recordType = try requiredString(object, "recordType", path: "")
        let zoneID =
            try object["zoneID"].map { value throws(RecordError) in try decodeZoneID(value, path: "zoneID") }
            ?? .default
        var deleted = false
        if let flag = object["deleted"] {
            guard case .bool(let value) = flag else {
                throw RecordError(.invalidRecord, at: "deleted", "expected true or false, found \(flag.typeName)")
            }
            deleted = value
        }
        if deleted {
            if let fields = object["fields"]?.objectValue, fields.count > 0 {
                throw RecordError(.invalidRecord, at: "fields", "a deleted record (\"deleted\": true) cannot have fields")
            }
            return .deletion(Deletion(recordType: recordType, recordName: recordName, zoneID: zoneID))
        }
        var fields: [String: FieldValue] = [:]
        if let fieldsJSON = object["fields"] {
            guard case .object(let fieldsObject) = fieldsJSON else {
                throw RecordError(.invalidRecord, at: "fields", "expected an object of fields, found \(fieldsJSON.typeName)")
            }
            fields.reserveCapacity(fieldsObject.count)
            for member in fieldsObject {
                if let value = try decodeField(member.value, zoneID: zoneID, path: "fields.\(member.key)") {
                    fields[member.key] = value
                }
            }
        }
        var system = SystemFields()
        if let tag = object["recordChangeTag"] {
            guard case .string(let value) = tag else {
                throw RecordError(.invalidRecord, at: "recordChangeTag", "expected a string, found \(tag.typeName)")
            }
            system.changeTag = value
        }
        system.created = try object["created"].map { value throws(RecordError) in try decodeStamp(value, path: "created") }
        system.modified = try object["modified"].map { value throws(RecordError) in try decodeStamp(value, path: "modified") }
        return .record(
            Record(
                recordType: recordType, recordName: recordName, zoneID: zoneID, fields: fields,
                system: system.isEmpty ? nil : system))
    }

    // MARK: - Record parts

    static let recordKeys: Set<String> = [
        "recordName", "recordType", "zoneID", "fields", "recordChangeTag", "created", "modified", "deleted",
        "pluginFields", "shortGUID", "createShortGUID", "publicPermission",
    ]
    static let sharingKeys: Set<String> = ["parent", "share", "participants", "owner", "currentUserParticipant"]

    /// Decodes a zone ID dictionary `{"zoneName": …, "ownerRecordName": …}`.
    public func decodeZoneID(_ json: JSONValue, path: String) throws(RecordError) -> ZoneID {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: path, "expected a zone ID object, found \(json.typeName)")
        }
        for member in object where !["zoneName", "ownerRecordName", "ownerName", "zoneType"].contains(member.key) {
            throw RecordError(.invalidRecord, at: "\(path).\(member.key)", "unknown zone ID key; expected zoneName, ownerRecordName")
        }
        let zoneName =
            try object["zoneName"].map { value throws(RecordError) in try string(value, path: "\(path).zoneName") }
            ?? ZoneID.defaultZoneName
        let owner = try (object["ownerRecordName"] ?? object["ownerName"]).map { value throws(RecordError) in
            try string(value, path: "\(path).ownerRecordName")
        }
        return ZoneID(zoneName: zoneName, ownerName: owner ?? ZoneID.defaultOwnerName)
    }

    private func decodeStamp(_ json: JSONValue, path: String) throws(RecordError) -> RecordStamp {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: path, "expected an object with a timestamp, found \(json.typeName)")
        }
        guard let timestampJSON = object["timestamp"] else {
            throw RecordError(.invalidRecord, at: "\(path).timestamp", "missing; expected milliseconds since 1970")
        }
        let timestamp = try milliseconds(timestampJSON, path: "\(path).timestamp")
        let user = try object["userRecordName"].map { value throws(RecordError) in try string(value, path: "\(path).userRecordName") }
        let device = try object["deviceID"].map { value throws(RecordError) in try string(value, path: "\(path).deviceID") }
        return RecordStamp(timestamp: timestamp, userRecordName: user, deviceID: device)
    }

    // MARK: - Scalars

    func requiredString(_ object: JSONObject, _ key: String, path: String) throws(RecordError) -> String {
        let fullPath = path.isEmpty ? key : "\(path).\(key)"
        guard let value = object[key] else { throw RecordError(.invalidRecord, at: fullPath, "missing; expected a string") }
        return try string(value, path: fullPath)
    }

    func string(_ json: JSONValue, path: String) throws(RecordError) -> String {
        guard case .string(let value) = json else {
            throw RecordError(.invalidRecord, at: path, "expected a string, found \(json.typeName)")
        }
        return value
    }

    func milliseconds(_ json: JSONValue, path: String) throws(RecordError) -> Int64 {
        switch json {
        case .integer(let value): return value
        case .number(let value):
            guard let exact = json.int64Value else {
                throw RecordError(.invalidRecord, at: path, "timestamps are whole milliseconds since 1970, found \(value)")
            }
            return exact
        case .string(let text):
            guard let value = Int64(text) else {
                throw RecordError(.invalidRecord, at: path, "expected whole milliseconds since 1970, found \"\(text)\"")
            }
            return value
        default:
            throw RecordError(.invalidRecord, at: path, "expected milliseconds since 1970, found \(json.typeName)")
        }
    }
}
