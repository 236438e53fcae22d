import FerryCore
import FerryJSON
import Foundation

/// What the decoder knows about the field it is reading.
struct FieldContext {
    /// The field's name.
    let name: String
    /// Positions of references that named no zone (−1 for a single reference, else list indices).
    var referencesWithoutZone: [Int] = []

    /// `fields.<name>.value`, for error messages.
    var valuePath: String { "fields.\(name).value" }
}

extension CloudKitJSONDecoder {
    /// Decodes a field dictionary `{"value": …, "type": …}` (keys in either order); `nil` for a `null` value.
    func field(_ scanner: inout JSONScanner, _ context: inout FieldContext) throws -> FieldValue? {
        let kind = try scanner.peek()
        guard kind == .object else {
            throw RecordError(.invalidRecord, at: "fields.\(context.name)", "expected a field object {\"value\": …, \"type\": …}, found \(kind.name)")
        }
        try scanner.beginObject()
        var tag: FieldType?
        var tagged = false
        var valueOffset: Int?
        var result: FieldValue?
        var decoded = false
        // A value before its type is decoded as the type it looks like; when the tag agrees (the usual case) the
        // value is not read a second time.
        var guess: FieldValue?
        var guessed = false
        let zoneless = context.referencesWithoutZone
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "type":
                guard !tagged else { throw RecordError(.invalidJSON, at: "fields.\(context.name).type", "the key appears twice") }
                tag = try self.tag(&scanner, context)
                tagged = true
            case "value":
                guard valueOffset == nil else { throw RecordError(.invalidJSON, at: context.valuePath, "the key appears twice") }
                let start = scanner.offset
                valueOffset = start
                if tagged {
                    result = try value(&scanner, tag: tag, &context)
                    decoded = true
                } else {
                    do {
                        guess = try value(&scanner, tag: nil, &context)
                        guessed = true
                    } catch {
                        context.referencesWithoutZone = zoneless
                        scanner.rewind(to: start)
                        try scanner.skipValue()
                    }
                }
            default:
                throw RecordError(.invalidRecord, at: "fields.\(context.name).\(key.string)", "unknown field key; expected value and type")
            }
        }
        guard let valueOffset else { throw RecordError(.invalidRecord, at: context.valuePath, "missing") }
        if !decoded, guessed, tag == nil || guess?.type == tag {
            return guess
        }
        if !decoded {
            // The value came before its type and is not of the type it looked like (or did not decode as that type):
            // read it again now that the type is known.
            context.referencesWithoutZone = zoneless
            let end = scanner.offset
            scanner.rewind(to: valueOffset)
            result = try value(&scanner, tag: tag, &context)
            scanner.rewind(to: end)
        }
        return result
    }

    /// Reads a type tag: Ferry's (`STRING`, `STRING_LIST`, `UNKNOWN_LIST`) and CloudKit's other spellings (`LIST`,
    /// `ASSETID`, `ASSETID_LIST`).
    private func tag(_ scanner: inout JSONScanner, _ context: FieldContext) throws -> FieldType {
        let text = try rawString(&scanner, path: "fields.\(context.name).type")
        if let type = Self.fieldType(tag: text) { return type }
        switch text {
        case "ENCRYPTED_BYTES", "ENCRYPTED_BYTES_LIST":
            throw RecordError(.unsupported, at: "fields.\(context.name).type", "encrypted fields cannot be copied outside CloudKit")
        default:
            throw RecordError(
                .invalidRecord, at: "fields.\(context.name).type",
                "unknown type tag \"\(text.string)\"; expected STRING, INT64, DOUBLE, TIMESTAMP, BYTES, REFERENCE, ASSET, LOCATION or a *_LIST of one"
            )
        }
    }

    /// The type a tag names, in Ferry's spelling or CloudKit's other ones; `nil` for an unknown or unsupported tag.
    static func fieldType(tag text: JSONRawString) -> FieldType? {
        if let type = text.withBytes(FieldType.init(tag:)) { return type }
        switch text {
        case "LIST": return .list(nil)
        case "ASSETID": return .scalar(.asset)
        case "ASSETID_LIST": return .list(.asset)
        default: return nil
        }
    }

    /// Decodes a value of the type a tag names, or of the inferred type when there is no tag.
    func value(_ scanner: inout JSONScanner, tag: FieldType?, _ context: inout FieldContext) throws -> FieldValue? {
        if try scanner.peek() == .null {
            try scanner.null()
            return nil
        }
        switch tag {
        case nil: return try inferred(&scanner, &context)
        case .scalar(let type)?: return try scalar(type, &scanner, &context, index: -1)
        case .list(let type?)?: return try list(type, &scanner, &context)
        case .list(nil)?: return try inferredList(&scanner, &context)
        }
    }

    private func list(_ type: ScalarType, _ scanner: inout JSONScanner, _ context: inout FieldContext) throws -> FieldValue {
        let kind = try scanner.peek()
        guard kind == .array else {
            throw RecordError(.invalidRecord, at: context.valuePath, "expected an array for \(type.tag)_LIST, found \(kind.name)")
        }
        try scanner.beginArray()
        var values: [FieldValue] = []
        var first = true
        while try scanner.nextElement(&first) {
            values.append(try scalar(type, &scanner, &context, index: values.count))
        }
        return .list(FieldList(unchecked: type, values))
    }

    private func inferredList(_ scanner: inout JSONScanner, _ context: inout FieldContext) throws -> FieldValue {
        let kind = try scanner.peek()
        guard kind == .array else { throw RecordError(.invalidRecord, at: context.valuePath, "expected an array for a LIST, found \(kind.name)") }
        let start = scanner.offset
        try scanner.beginArray()
        var first = true
        guard try scanner.nextElement(&first) else { return .list(.emptyUnknown) }
        let type = try inferredType(&scanner, path: "\(context.valuePath)[0]")
        scanner.rewind(to: start)
        return try list(type, &scanner, &context)
    }

    private func inferred(_ scanner: inout JSONScanner, _ context: inout FieldContext) throws -> FieldValue {
        if try scanner.peek() == .array { return try inferredList(&scanner, &context) }
        return try scalar(try inferredType(&scanner, path: context.valuePath), &scanner, &context, index: -1)
    }

    /// The type CloudKit would give an untagged value; leaves the scanner where it was.
    private func inferredType(_ scanner: inout JSONScanner, path: @autoclosure () -> String) throws -> ScalarType {
        switch try scanner.peek() {
        case .string: return .string
        case .bool: return .int64
        case .number:
            let start = scanner.offset
            defer { scanner.rewind(to: start) }
            switch try scanner.number() {
            case .integer, .unsigned: return .int64
            case .double: return .double
            }
        case .object:
            let start = scanner.offset
            defer { scanner.rewind(to: start) }
            try scanner.beginObject()
            var first = true
            while let key = try scanner.nextRawKey(&first) {
                switch key {
                case "recordName": return .reference
                case "latitude": return .location
                case "sha256", "path", "fileChecksum": return .asset
                default: try scanner.skipValue()
                }
            }
            throw RecordError(.invalidRecord, at: path(), "cannot tell the type of this object; add a \"type\" tag")
        case .array: throw RecordError(.invalidRecord, at: path(), "lists cannot contain lists")
        case .null: throw RecordError(.invalidRecord, at: path(), "lists cannot contain null")
        }
    }

    // MARK: - Scalars

    /// Decodes one scalar; `index` is its position in a list, or −1.
    private func scalar(_ type: ScalarType, _ scanner: inout JSONScanner, _ context: inout FieldContext, index: Int) throws -> FieldValue {
        let name = context.name
        func path() -> String { index < 0 ? "fields.\(name).value" : "fields.\(name).value[\(index)]" }
        switch type {
        case .string:
            return .string(try string(&scanner, path: path()))
        case .int64:
            return .int64(try int64(&scanner, path: path))
        case .double:
            return .double(try double(&scanner, path: path))
        case .timestamp:
            return .timestamp(try milliseconds(&scanner, path: path()))
        case .bytes:
            let text = try string(&scanner, path: path())
            guard let data = Data(base64Encoded: text) else {
                throw RecordError(.invalidRecord, at: path(), "BYTES must be standard base64 with padding")
            }
            return .bytes(data)
        case .reference:
            let (reference, hasZone) = try reference(&scanner, path: path)
            if !hasZone { context.referencesWithoutZone.append(index) }
            return .reference(reference)
        case .asset:
            return .asset(try asset(&scanner, path: path))
        case .location:
            return .location(try location(&scanner, path: path))
        }
    }

    private func int64(_ scanner: inout JSONScanner, path: () -> String) throws -> Int64 {
        try wholeNumber(&scanner, what: "a whole number for INT64", acceptsBool: true, path: path)
    }

    private func double(_ scanner: inout JSONScanner, path: () -> String) throws -> Double {
        switch try scanner.peek() {
        case .number:
            switch try scanner.number() {
            case .integer(let value): return Double(value)
            case .unsigned(let value): return Double(value)
            case .double(let value): return value
            }
        case .string:
            let text = try scanner.string()
            guard let value = Double(text), value.isFinite else {
                throw RecordError(.invalidRecord, at: path(), "DOUBLE needs a finite number, found \"\(text)\"")
            }
            return value
        case let kind:
            throw RecordError(.invalidRecord, at: path(), "DOUBLE needs a number, found \(kind.name)")
        }
    }

    /// Decodes a reference; the Boolean says whether it named a zone.
    private func reference(_ scanner: inout JSONScanner, path: () -> String) throws -> (Reference, Bool) {
        let kind = try scanner.peek()
        guard kind == .object else { throw RecordError(.invalidRecord, at: path(), "REFERENCE needs an object with recordName, found \(kind.name)") }
        try scanner.beginObject()
        var name: String?
        var zone: ZoneID?
        var action = Reference.Action.none
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "recordName": name = try string(&scanner, path: "\(path()).recordName")
            case "zoneID": zone = try zoneID(&scanner, path: "\(path()).zoneID")
            case "action":
                switch try rawString(&scanner, path: "\(path()).action") {
                case "NONE": action = .none
                case "DELETE_SELF": action = .deleteSelf
                case "VALIDATE": action = .validate
                case let text:
                    throw RecordError(.invalidRecord, at: "\(path()).action", "expected NONE, DELETE_SELF or VALIDATE, found \"\(text.string)\"")
                }
            default:
                throw RecordError(.invalidRecord, at: "\(path()).\(key.string)", "unknown reference key; expected recordName, zoneID, action")
            }
        }
        guard let name else { throw RecordError(.invalidRecord, at: "\(path()).recordName", "missing; expected a string") }
        return (Reference(recordName: name, zoneID: zone ?? .default, action: action), zone != nil)
    }

    private func asset(_ scanner: inout JSONScanner, path: () -> String) throws -> Asset {
        let kind = try scanner.peek()
        guard kind == .object else {
            throw RecordError(.invalidRecord, at: path(), "ASSET needs an object with sha256 and size (or path), found \(kind.name)")
        }
        try scanner.beginObject()
        var digest: SHA256Digest?
        var size: Int64?
        var fileName: String?
        var file: String?
        var isCloudKitAsset = false
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "sha256":
                guard let parsed = try rawString(&scanner, path: "\(path()).sha256").withBytes(SHA256Digest.init(hex:)) else {
                    throw RecordError(.invalidRecord, at: "\(path()).sha256", "expected 64 hex digits")
                }
                digest = parsed
            case "size": size = try int64(&scanner, path: { "\(path()).size" })
            case "fileName": fileName = try string(&scanner, path: "\(path()).fileName")
            case "path": file = try string(&scanner, path: "\(path()).path")
            case "fileChecksum", "downloadURL", "receipt", "wrappingKey", "referenceChecksum":
                isCloudKitAsset = true
                try scanner.skipValue()
            default:
                throw RecordError(.invalidRecord, at: "\(path()).\(key.string)", "unknown asset key; expected sha256, size, fileName or path")
            }
        }
        if let file {
            guard let assetResolver else {
                throw RecordError(.invalidRecord, at: "\(path()).path", "an asset given by path needs an assets directory (--assets)")
            }
            do {
                return try assetResolver(file, fileName)
            } catch let error as RecordError {
                throw RecordError(error.code, at: "\(path()).path", error.reason, cause: error.cause)
            } catch {
                throw RecordError(.assetUnavailable, at: "\(path()).path", "\(error)", cause: error)
            }
        }
        guard let digest else {
            if isCloudKitAsset {
                throw RecordError(
                    .unsupported, at: path(), "a CloudKit ASSETID carries no content hash; download the file and give it as {\"path\": …}")
            }
            throw RecordError(.invalidRecord, at: "\(path()).sha256", "missing; expected the file's SHA-256 (or a path)")
        }
        guard let size, size >= 0 else { throw RecordError(.invalidRecord, at: "\(path()).size", "expected the file size in bytes") }
        return Asset(sha256: digest, size: size, fileName: fileName)
    }

    private func location(_ scanner: inout JSONScanner, path: () -> String) throws -> Location {
        let kind = try scanner.peek()
        guard kind == .object else {
            throw RecordError(.invalidRecord, at: path(), "LOCATION needs an object with latitude and longitude, found \(kind.name)")
        }
        try scanner.beginObject()
        var numbers: [String: Double] = [:]
        var timestamp: Int64?
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "latitude", "longitude", "horizontalAccuracy", "verticalAccuracy", "altitude", "speed", "course":
                if try scanner.peek() == .null {
                    try scanner.null()
                } else {
                    numbers[key.string] = try double(&scanner, path: { "\(path()).\(key.string)" })
                }
            case "timestamp":
                if try scanner.peek() == .null { try scanner.null() } else { timestamp = try milliseconds(&scanner, path: "\(path()).timestamp") }
            default:
                throw RecordError(.invalidRecord, at: "\(path()).\(key.string)", "unknown location key")
            }
        }
        guard let latitude = numbers["latitude"] else { throw RecordError(.invalidRecord, at: "\(path()).latitude", "missing") }
        guard let longitude = numbers["longitude"] else { throw RecordError(.invalidRecord, at: "\(path()).longitude", "missing") }
        return Location(
            latitude: latitude, longitude: longitude, horizontalAccuracy: numbers["horizontalAccuracy"],
            verticalAccuracy: numbers["verticalAccuracy"], altitude: numbers["altitude"], speed: numbers["speed"],
            course: numbers["course"], timestamp: timestamp)
    }
}

extension FieldValue {
    /// This value with the zone of the references at `positions` (−1: the value itself; else list indices) set.
    func settingZone(_ zone: ZoneID, ofReferencesAt positions: [Int]) -> FieldValue {
        switch self {
        case .reference(var reference):
            reference.zoneID = zone
            return .reference(reference)
        case .list(let list):
            var elements = list.elements
            for index in positions where index >= 0 && index < elements.count {
                if case .reference(var reference) = elements[index] {
                    reference.zoneID = zone
                    elements[index] = .reference(reference)
                }
            }
            return .list(FieldList(unchecked: list.elementType, elements))
        default:
            return self
        }
    }
}
