import FerryCore
import FerryJSON

/// Decodes records and deletions from CloudKit Web Services record dictionaries.
///
/// Accepts what CloudKit and its clients write: type tags on fields or none (then the type is inferred), `*_LIST` and
/// bare `LIST` tags, numbers as strings (`numbersAsStrings`), `ownerName` for `ownerRecordName`, and response-only
/// keys (`pluginFields`, `shortGUID`, `zoneType`), which are dropped. A record with `"deleted": true` is a deletion.
/// A reference without a `zoneID` points into its record's zone.
///
/// Records are decoded straight from the bytes with ``JSONScanner``, without an intermediate tree: this is the
/// hot path of every import. Errors name the JSON path (`fields.photo.value`) or the byte offset.
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
    package func decode(line: UnsafeRawBufferPointer) throws(RecordError) -> RecordChange {
        var scanner = JSONScanner(line)
        do {
            return try decodeRecord(&scanner)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// What the record decoder threw, as a ``RecordError``.
    static func recordError(_ error: any Error) -> RecordError {
        switch error {
        case let error as RecordError: error
        case let found as ModifyRequestKey:
            RecordError(
                .invalidRecord, at: found.key,
                "this is a CloudKit records/modify request ({\"operations\": [...]}), not a record dictionary; ferry pack reads its operations")
        case let error as JSONSyntaxError: RecordError(.invalidJSON, at: "", "not valid JSON \(error)")
        default: RecordError(.invalidRecord, at: "", "\(error)")
        }
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

    /// Decodes a record dictionary given as a JSON tree.
    public func decode(_ json: JSONValue) throws(RecordError) -> RecordChange {
        try decode(bytes: JSONWriter.canonical(json))
    }

    /// Decodes a zone ID dictionary `{"zoneName": …, "ownerRecordName": …}` given as a JSON tree.
    public func decodeZoneID(_ json: JSONValue, path: String) throws(RecordError) -> ZoneID {
        let bytes = JSONWriter.canonical(json)
        do {
            return try bytes.withUnsafeBytes { buffer in
                var scanner = JSONScanner(buffer)
                let zone = try zoneID(&scanner, path: path)
                try scanner.finish()
                return zone
            }
        } catch let error as RecordError {
            throw error
        } catch {
            throw RecordError(.invalidRecord, at: path, "\(error)")
        }
    }

    // MARK: - Records

    private static func unknownKey(_ key: String) -> RecordError {
        RecordError(
            .invalidRecord, at: key,
            "unknown record key; expected recordName, recordType, zoneID, fields, recordChangeTag, created, modified or deleted")
    }

    /// Decodes a record dictionary; one without a `zoneID` is in `defaultZone`.
    /// - Throws: ``RecordError``, or ``ModifyRequestKey`` at a key only a `records/modify` request has.
    func decodeRecord(_ scanner: inout JSONScanner, defaultZone: ZoneID = .default) throws -> RecordChange {
        let kind = try scanner.peek()
        guard kind == .object else { throw RecordError(.invalidRecord, at: "", "expected a record object, found \(kind.name)") }
        try scanner.beginObject()
        var recordName: String?
        var recordType: String?
        var zone: ZoneID?
        var deleted = false
        var system = SystemFields()
        var decoded: DecodedFields?
        var seen: UInt16 = 0
        /// The `reason` of a CloudKit error entry, which a response's `records` holds where a record failed.
        var errorReason: String?
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            // Each known key has a bit, so a repeated key is caught without hashing.
            func once(_ bit: UInt16) throws {
                guard seen & bit == 0 else { throw RecordError(.invalidJSON, at: key.string, "the key appears twice") }
                seen |= bit
            }
            switch key {
            case "recordName":
                try once(1 << 0)
                recordName = try string(&scanner, path: key.string)
            case "recordType":
                try once(1 << 1)
                recordType = try string(&scanner, path: key.string)
            case "zoneID":
                try once(1 << 2)
                zone = try zoneID(&scanner, path: key.string)
            case "fields":
                try once(1 << 3)
                decoded = try fields(&scanner)
            case "recordChangeTag":
                try once(1 << 4)
                system.changeTag = try string(&scanner, path: key.string)
            case "created":
                try once(1 << 5)
                system.created = try stamp(&scanner, path: key.string)
            case "modified":
                try once(1 << 6)
                system.modified = try stamp(&scanner, path: key.string)
            case "deleted":
                try once(1 << 7)
                guard try scanner.peek() == .bool else {
                    throw RecordError(.invalidRecord, at: key.string, "expected true or false, found \(try scanner.peek().name)")
                }
                deleted = try scanner.bool()
            case "pluginFields", "shortGUID", "createShortGUID", "publicPermission":
                try once(1 << 8)
                try scanner.skipValue()
            case "parent", "share", "participants", "owner", "currentUserParticipant":
                guard try scanner.peek() == .null else {
                    throw RecordError(
                        .unsupported, at: key.string,
                        "CloudKit sharing (parent/share) is not supported yet; remove the key to copy the record without it")
                }
                try scanner.null()
            case "reason":
                try once(1 << 9)
                errorReason = try string(&scanner, path: key.string)
            case "serverErrorCode":
                let code = try string(&scanner, path: key.string)
                throw RecordError(
                    .invalidRecord, at: "",
                    "CloudKit answered with the error \(code)\(errorReason.map { " (\($0))" } ?? "") here instead of a record; fetch the record again, or leave the entry out"
                )
            case "operations", "atomic", "desiredKeys", "numbersAsStrings":
                throw ModifyRequestKey(key: key.string)
            default:
                throw Self.unknownKey(key.string)
            }
        }
        try scanner.finish()
        if errorReason != nil { throw Self.unknownKey("reason") }
        guard let recordName else { throw RecordError(.invalidRecord, at: "recordName", "missing; expected a string") }
        guard let recordType else { throw RecordError(.invalidRecord, at: "recordType", "missing; expected a string") }
        let zoneID = zone ?? defaultZone
        if deleted {
            if let decoded, !decoded.fields.isEmpty {
                throw RecordError(.invalidRecord, at: "fields", "a deleted record (\"deleted\": true) cannot have fields")
            }
            return .deletion(Deletion(recordType: recordType, recordName: recordName, zoneID: zoneID))
        }
        return .record(
            try Self.record(
                recordType: recordType, recordName: recordName, zoneID: zoneID, fields: decoded ?? DecodedFields(),
                system: system.isEmpty ? nil : system))
    }

    /// Decodes a record's fields object (`{"name": {"type": …, "value": …}, …}`, the value of a record dictionary's
    /// `fields`) into the record of that name, type and zone: how a store that keeps the identity in columns of its
    /// own gives records back.
    /// - Throws: ``RecordError`` saying what is wrong and where (paths start at `fields`).
    public func decodeRecord(
        fields bytes: UnsafeRawBufferPointer, recordType: String, recordName: String, zoneID: ZoneID, system: SystemFields? = nil
    ) throws(RecordError) -> Record {
        do {
            var scanner = JSONScanner(bytes)
            let decoded = try fields(&scanner)
            try scanner.finish()
            return try Self.record(recordType: recordType, recordName: recordName, zoneID: zoneID, fields: decoded, system: system)
        } catch {
            throw Self.recordError(error)
        }
    }

    /// The record of decoded fields: references written without a zone get the record's, the fields sorted.
    private static func record(
        recordType: String, recordName: String, zoneID: ZoneID, fields decoded: consuming DecodedFields, system: SystemFields?
    ) throws -> Record {
        // Taken out of `decoded`, so that the array is not shared when references get their zone in place.
        var fields = decoded.fields
        let pendingZones = decoded.pendingZones
        _ = consume decoded
        for (index, pending) in pendingZones {
            fields[index].value = fields[index].value.settingZone(zoneID, ofReferencesAt: pending)
        }
        guard let sorted = RecordFields(unsorted: consume fields) else {
            throw RecordError(.invalidJSON, at: "fields", "a field name appears twice")
        }
        return Record(recordType: recordType, recordName: recordName, zoneID: zoneID, fields: sorted, system: system)
    }

    private struct DecodedFields {
        var fields: [RecordFields.Field] = []
        /// References that had no zone and get the record's: field index → positions in the value.
        var pendingZones: [(Int, [Int])] = []
    }

    private func fields(_ scanner: inout JSONScanner) throws -> DecodedFields {
        let kind = try scanner.peek()
        guard kind == .object else { throw RecordError(.invalidRecord, at: "fields", "expected an object of fields, found \(kind.name)") }
        try scanner.beginObject()
        var result = DecodedFields()
        // Room for a typical record's fields: growing from empty reallocated the array three or four times.
        result.fields.reserveCapacity(8)
        var first = true
        while let name = try scanner.nextKey(&first) {
            var context = FieldContext(name: name)
            if let value = try field(&scanner, &context) {
                if !context.referencesWithoutZone.isEmpty { result.pendingZones.append((result.fields.count, context.referencesWithoutZone)) }
                result.fields.append(RecordFields.Field(name: name, value: value))
            }
        }
        return result
    }

    // MARK: - Record parts

    func zoneID(_ scanner: inout JSONScanner, path: @autoclosure () -> String) throws -> ZoneID {
        let kind = try scanner.peek()
        guard kind == .object else { throw RecordError(.invalidRecord, at: path(), "expected a zone ID object, found \(kind.name)") }
        try scanner.beginObject()
        var zoneName: String?
        var owner: String?
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "zoneName": zoneName = try string(&scanner, path: "\(path()).zoneName")
            case "ownerRecordName", "ownerName":
                // Nearly every zone has the default owner: share one string instead of allocating one per zone ID.
                let text = try rawString(&scanner, path: "\(path()).ownerRecordName")
                owner = text.matches("__defaultOwner__") ? ZoneID.defaultOwnerName : text.string
            case "zoneType": try scanner.skipValue()
            default:
                throw RecordError(.invalidRecord, at: "\(path()).\(key.string)", "unknown zone ID key; expected zoneName, ownerRecordName")
            }
        }
        return ZoneID(zoneName: zoneName ?? ZoneID.defaultZoneName, ownerName: owner ?? ZoneID.defaultOwnerName)
    }

    func stamp(_ scanner: inout JSONScanner, path: String) throws -> RecordStamp {
        let kind = try scanner.peek()
        guard kind == .object else { throw RecordError(.invalidRecord, at: path, "expected an object with a timestamp, found \(kind.name)") }
        try scanner.beginObject()
        var timestamp: Int64?
        var stamp = RecordStamp(timestamp: 0)
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "timestamp": timestamp = try milliseconds(&scanner, path: "\(path).timestamp")
            case "userRecordName": stamp.userRecordName = try string(&scanner, path: "\(path).userRecordName")
            case "deviceID": stamp.deviceID = try string(&scanner, path: "\(path).deviceID")
            default: try scanner.skipValue()
            }
        }
        guard let timestamp else { throw RecordError(.invalidRecord, at: "\(path).timestamp", "missing; expected milliseconds since 1970") }
        stamp.timestamp = timestamp
        return stamp
    }

    // MARK: - Scalars

    func string(_ scanner: inout JSONScanner, path: @autoclosure () -> String) throws -> String {
        let kind = try scanner.peek()
        guard kind == .string else { throw RecordError(.invalidRecord, at: path(), "expected a string, found \(kind.name)") }
        return try scanner.string()
    }

    /// A string as a view of the input, for values matched or parsed in place (tags, actions, digests).
    func rawString(_ scanner: inout JSONScanner, path: @autoclosure () -> String) throws -> JSONRawString {
        let kind = try scanner.peek()
        guard kind == .string else { throw RecordError(.invalidRecord, at: path(), "expected a string, found \(kind.name)") }
        return try scanner.rawString()
    }

    func milliseconds(_ scanner: inout JSONScanner, path: @autoclosure () -> String) throws -> Int64 {
        try wholeNumber(&scanner, what: "whole milliseconds since 1970", acceptsBool: false, path: path)
    }

    /// A whole number written as a number, a string of digits (`numbersAsStrings`), or (for INT64) a Boolean.
    func wholeNumber(_ scanner: inout JSONScanner, what: String, acceptsBool: Bool, path: () -> String) throws -> Int64 {
        let kind = try scanner.peek()
        switch kind {
        case .number:
            switch try scanner.number() {
            case .integer(let value): return value
            case .unsigned(let value):
                throw RecordError(.invalidRecord, at: path(), "expected \(what) in the 64-bit range, found \(value)")
            case .double(let value):
                guard value.rounded() == value, let exact = Int64(exactly: value) else {
                    throw RecordError(.invalidRecord, at: path(), "expected \(what) in the 64-bit range, found \(value)")
                }
                return exact
            }
        case .bool where acceptsBool:
            return try scanner.bool() ? 1 : 0
        case .string:
            let text = try scanner.string()
            guard let value = Int64(text) else { throw RecordError(.invalidRecord, at: path(), "expected \(what), found \"\(text)\"") }
            return value
        default:
            throw RecordError(.invalidRecord, at: path(), "expected \(what), found \(kind.name)")
        }
    }
}

extension JSONScanner.Kind {
    /// The kind's name for error messages.
    var name: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}
