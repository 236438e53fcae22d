import FerryCore
import Foundation

extension CloudKitJSONDecoder {
    /// Decodes a field dictionary `{"value": …, "type": …}`; returns `nil` for a `null` value (an absent field).
    func decodeField(_ json: JSONValue, zoneID: ZoneID, path: String) throws(RecordError) -> FieldValue? {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: path, "expected a field object {\"value\": …, \"type\": …}, found \(json.typeName)")
        }
        for member in object where member.key != "value" && member.key != "type" {
            throw RecordError(.invalidRecord, at: "\(path).\(member.key)", "unknown field key; expected value and type")
        }
        guard let value = object["value"] else {
            throw RecordError(.invalidRecord, at: "\(path).value", "missing")
        }
        if value == .null { return nil }
        let valuePath = "\(path).value"
        guard let typeJSON = object["type"] else {
            return try inferred(value, zoneID: zoneID, path: valuePath)
        }
        let tag = try string(typeJSON, path: "\(path).type")
        switch tag {
        case "LIST", "UNKNOWN_LIST":
            return try inferredList(value, zoneID: zoneID, path: valuePath)
        case "ASSETID":
            return try scalar(.asset, value, zoneID: zoneID, path: valuePath)
        case "ASSETID_LIST":
            return try list(.asset, value, zoneID: zoneID, path: valuePath)
        case "ENCRYPTED_BYTES", "ENCRYPTED_BYTES_LIST":
            throw RecordError(.unsupported, at: "\(path).type", "encrypted fields cannot be copied outside CloudKit")
        default:
            guard let type = FieldType(tag: tag) else {
                throw RecordError(
                    .invalidRecord, at: "\(path).type",
                    "unknown type tag \"\(tag)\"; expected STRING, INT64, DOUBLE, TIMESTAMP, BYTES, REFERENCE, ASSET, LOCATION or a *_LIST of one")
            }
            switch type {
            case .scalar(let scalarType): return try scalar(scalarType, value, zoneID: zoneID, path: valuePath)
            case .list(let elementType?): return try list(elementType, value, zoneID: zoneID, path: valuePath)
            case .list(nil): return try inferredList(value, zoneID: zoneID, path: valuePath)
            }
        }
    }

    private func list(_ type: ScalarType, _ json: JSONValue, zoneID: ZoneID, path: String) throws(RecordError) -> FieldValue {
        guard case .array(let elements) = json else {
            throw RecordError(.invalidRecord, at: path, "expected an array for \(type.tag)_LIST, found \(json.typeName)")
        }
        var values: [FieldValue] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            values.append(try scalar(type, element, zoneID: zoneID, path: "\(path)[\(index)]"))
        }
        return .list(FieldList(unchecked: type, values))
    }

    private func inferredList(_ json: JSONValue, zoneID: ZoneID, path: String) throws(RecordError) -> FieldValue {
        guard case .array(let elements) = json else {
            throw RecordError(.invalidRecord, at: path, "expected an array for a LIST, found \(json.typeName)")
        }
        guard let first = elements.first else { return .list(.emptyUnknown) }
        let type = try inferredType(first, path: "\(path)[0]")
        return try list(type, json, zoneID: zoneID, path: path)
    }

    private func inferred(_ json: JSONValue, zoneID: ZoneID, path: String) throws(RecordError) -> FieldValue {
        if case .array = json { return try inferredList(json, zoneID: zoneID, path: path) }
        return try scalar(try inferredType(json, path: path), json, zoneID: zoneID, path: path)
    }

    /// The type CloudKit would give an untagged value.
    private func inferredType(_ json: JSONValue, path: String) throws(RecordError) -> ScalarType {
        switch json {
        case .string: return .string
        case .integer, .bool: return .int64
        case .number: return .double
        case .object(let object):
            if object["recordName"] != nil { return .reference }
            if object["latitude"] != nil { return .location }
            if object["sha256"] != nil || object["path"] != nil || object["fileChecksum"] != nil { return .asset }
            throw RecordError(.invalidRecord, at: path, "cannot tell the type of this object; add a \"type\" tag")
        case .array:
            throw RecordError(.invalidRecord, at: path, "lists cannot contain lists")
        case .null:
            throw RecordError(.invalidRecord, at: path, "lists cannot contain null")
        }
    }

    // MARK: - Scalars

    private func scalar(_ type: ScalarType, _ json: JSONValue, zoneID: ZoneID, path: String) throws(RecordError) -> FieldValue {
        switch type {
        case .string:
            return .string(try string(json, path: path))
        case .int64:
            return .int64(try int64(json, path: path))
        case .double:
            return .double(try double(json, path: path))
        case .timestamp:
            return .timestamp(try milliseconds(json, path: path))
        case .bytes:
            let text = try string(json, path: path)
            guard let data = Data(base64Encoded: text) else {
                throw RecordError(.invalidRecord, at: path, "BYTES must be standard base64 with padding")
            }
            return .bytes(data)
        case .reference:
            return .reference(try reference(json, zoneID: zoneID, path: path))
        case .asset:
            return .asset(try asset(json, path: path))
        case .location:
            return .location(try location(json, path: path))
        }
    }

    private func int64(_ json: JSONValue, path: String) throws(RecordError) -> Int64 {
        switch json {
        case .integer(let value): return value
        case .bool(let flag): return flag ? 1 : 0
        case .number(let value):
            guard let exact = json.int64Value else {
                throw RecordError(.invalidRecord, at: path, "INT64 needs a whole number in the 64-bit range, found \(value)")
            }
            return exact
        case .string(let text):
            guard let value = Int64(text) else {
                throw RecordError(.invalidRecord, at: path, "INT64 needs a whole number, found \"\(text)\"")
            }
            return value
        default:
            throw RecordError(.invalidRecord, at: path, "INT64 needs a number, found \(json.typeName)")
        }
    }

    private func double(_ json: JSONValue, path: String) throws(RecordError) -> Double {
        switch json {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        case .string(let text):
            guard let value = Double(text), value.isFinite else {
                throw RecordError(.invalidRecord, at: path, "DOUBLE needs a finite number, found \"\(text)\"")
            }
            return value
        default:
            throw RecordError(.invalidRecord, at: path, "DOUBLE needs a number, found \(json.typeName)")
        }
    }

    private func optionalDouble(_ object: JSONObject, _ key: String, path: String) throws(RecordError) -> Double? {
        guard let value = object[key], value != .null else { return nil }
        return try double(value, path: "\(path).\(key)")
    }

    private func reference(_ json: JSONValue, zoneID: ZoneID, path: String) throws(RecordError) -> Reference {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: path, "REFERENCE needs an object with recordName, found \(json.typeName)")
        }
        for member in object where !["recordName", "zoneID", "action"].contains(member.key) {
            throw RecordError(.invalidRecord, at: "\(path).\(member.key)", "unknown reference key; expected recordName, zoneID, action")
        }
        let name = try requiredString(object, "recordName", path: path)
        let target = try object["zoneID"].map { value throws(RecordError) in try decodeZoneID(value, path: "\(path).zoneID") } ?? zoneID
        var action = Reference.Action.none
        if let actionJSON = object["action"] {
            let text = try string(actionJSON, path: "\(path).action")
            guard let parsed = Reference.Action(rawValue: text) else {
                throw RecordError(.invalidRecord, at: "\(path).action", "expected NONE, DELETE_SELF or VALIDATE, found \"\(text)\"")
            }
            action = parsed
        }
        return Reference(recordName: name, zoneID: target, action: action)
    }

    private func asset(_ json: JSONValue, path: String) throws(RecordError) -> Asset {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: path, "ASSET needs an object with sha256 and size (or path), found \(json.typeName)")
        }
        let fileName = try object["fileName"].map { value throws(RecordError) in try string(value, path: "\(path).fileName") }
        if let pathJSON = object["path"] {
            let file = try string(pathJSON, path: "\(path).path")
            guard let assetResolver else {
                throw RecordError(.invalidRecord, at: "\(path).path", "an asset given by path needs an assets directory (--assets)")
            }
            do {
                return try assetResolver(file, fileName)
            } catch let error as RecordError {
                throw RecordError(error.code, at: "\(path).path", error.reason, cause: error.cause)
            } catch {
                throw RecordError(.assetUnavailable, at: "\(path).path", "\(error)", cause: error)
            }
        }
        guard let hexJSON = object["sha256"] else {
            if object["fileChecksum"] != nil || object["downloadURL"] != nil {
                throw RecordError(
                    .unsupported, at: path,
                    "a CloudKit ASSETID carries no content hash; download the file and give it as {\"path\": …}")
            }
            throw RecordError(.invalidRecord, at: "\(path).sha256", "missing; expected the file's SHA-256 (or a path)")
        }
        let hex = try string(hexJSON, path: "\(path).sha256")
        guard let digest = SHA256Digest(hex: hex) else {
            throw RecordError(.invalidRecord, at: "\(path).sha256", "expected 64 hex digits")
        }
        guard let sizeJSON = object["size"], let size = sizeJSON.int64Value, size >= 0 else {
            throw RecordError(.invalidRecord, at: "\(path).size", "expected the file size in bytes")
        }
        for member in object where !["sha256", "size", "fileName", "path"].contains(member.key) {
            throw RecordError(.invalidRecord, at: "\(path).\(member.key)", "unknown asset key; expected sha256, size, fileName or path")
        }
        return Asset(sha256: digest, size: size, fileName: fileName)
    }

    private func location(_ json: JSONValue, path: String) throws(RecordError) -> Location {
        guard case .object(let object) = json else {
            throw RecordError(.invalidRecord, at: path, "LOCATION needs an object with latitude and longitude, found \(json.typeName)")
        }
        for member in object where !Self.locationKeys.contains(member.key) {
            throw RecordError(.invalidRecord, at: "\(path).\(member.key)", "unknown location key")
        }
        guard let latitude = try optionalDouble(object, "latitude", path: path) else {
            throw RecordError(.invalidRecord, at: "\(path).latitude", "missing")
        }
        guard let longitude = try optionalDouble(object, "longitude", path: path) else {
            throw RecordError(.invalidRecord, at: "\(path).longitude", "missing")
        }
        var location = Location(latitude: latitude, longitude: longitude)
        location.horizontalAccuracy = try optionalDouble(object, "horizontalAccuracy", path: path)
        location.verticalAccuracy = try optionalDouble(object, "verticalAccuracy", path: path)
        location.altitude = try optionalDouble(object, "altitude", path: path)
        location.speed = try optionalDouble(object, "speed", path: path)
        location.course = try optionalDouble(object, "course", path: path)
        if let timestamp = object["timestamp"], timestamp != .null {
            location.timestamp = try milliseconds(timestamp, path: "\(path).timestamp")
        }
        return location
    }

    static let locationKeys: Set<String> = [
        "latitude", "longitude", "horizontalAccuracy", "verticalAccuracy", "altitude", "speed", "course", "timestamp",
    ]
}
