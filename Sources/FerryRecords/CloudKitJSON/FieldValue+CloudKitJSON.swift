import FerryCore
import FerryJSON
import FoundationEssentials

extension FieldValue {
    /// Writes the field dictionary `{"type":"…","value":…}` in canonical form.
    public func writeCloudKitJSON(to writer: inout JSONWriter) {
        writer.raw(type.openingJSON)
        writeValue(to: &writer)
        writer.byte(UInt8(ascii: "}"))
    }

    /// Writes only the value part, in canonical form (`"text"`, `42`, `{"recordName":…}`).
    public func writeValue(to writer: inout JSONWriter) {
        switch self {
        case .string(let text): writer.string(text)
        case .int64(let number): writer.integer(number)
        case .double(let number): writer.double(number)
        case .timestamp(let milliseconds): writer.integer(milliseconds)
        case .bytes(let data): data.withUnsafeBytes { writer.base64($0.bindMemory(to: UInt8.self)) }
        case .reference(let reference):
            writer.raw(reference.action.openingJSON)
            writer.string(reference.recordName)
            writer.raw(",\"zoneID\":")
            reference.zoneID.writeCloudKitJSON(to: &writer)
            writer.byte(UInt8(ascii: "}"))
        case .asset(let asset):
            writer.byte(UInt8(ascii: "{"))
            if let fileName = asset.fileName {
                writer.raw("\"fileName\":")
                writer.string(fileName)
                writer.byte(UInt8(ascii: ","))
            }
            writer.raw("\"sha256\":\"")
            asset.sha256.writeHex(to: &writer)
            writer.raw("\",\"size\":")
            writer.integer(asset.size)
            writer.byte(UInt8(ascii: "}"))
        case .location(let location):
            location.writeCloudKitJSON(to: &writer)
        case .list(let list):
            writer.byte(UInt8(ascii: "["))
            for (index, element) in list.elements.enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                element.writeValue(to: &writer)
            }
            writer.byte(UInt8(ascii: "]"))
        }
    }
}

extension Reference.Action {
    /// A reference dictionary's opening up to its record name, `{"action":"NONE","recordName":`.
    var openingJSON: StaticString {
        switch self {
        case .none: "{\"action\":\"NONE\",\"recordName\":"
        case .deleteSelf: "{\"action\":\"DELETE_SELF\",\"recordName\":"
        case .validate: "{\"action\":\"VALIDATE\",\"recordName\":"
        }
    }
}

extension Location {
    func writeCloudKitJSON(to writer: inout JSONWriter) {
        // Keys in canonical (byte) order; optional ones only when present.
        let members: [(String, Double?)] = [
            ("altitude", altitude), ("course", course), ("horizontalAccuracy", horizontalAccuracy),
            ("latitude", latitude), ("longitude", longitude), ("speed", speed),
        ]
        writer.byte(UInt8(ascii: "{"))
        var first = true
        for (key, value) in members {
            guard let value else { continue }
            if !first { writer.byte(UInt8(ascii: ",")) }
            first = false
            writer.key(key)
            writer.double(value)
        }
        if let timestamp {
            writer.raw(",\"timestamp\":")
            writer.integer(timestamp)
        }
        if let verticalAccuracy {
            writer.raw(",\"verticalAccuracy\":")
            writer.double(verticalAccuracy)
        }
        writer.byte(UInt8(ascii: "}"))
    }
}
