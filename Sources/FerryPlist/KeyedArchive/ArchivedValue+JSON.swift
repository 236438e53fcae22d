import FerryCore
import FerryJSON
import Foundation

extension ArchivedValue {
    /// The decoded object graph as JSON.
    ///
    /// Plain values and Foundation collections become plain JSON (dates as ISO 8601, data as base64); other objects
    /// become `{"$class": "CKRecordID", …}`. An object that appears more than once is written in full once, with
    /// `"$id": uid`, and as `{"$ref": uid}` everywhere else, cycles included, so the output is finite and small.
    public var jsonValue: JSONValue {
        var counts: [Int: Int] = [:]
        Self.countReferences(self, into: &counts)
        var renderer = ArchiveJSONRenderer(shared: Set(counts.filter { $0.value > 1 }.keys))
        return renderer.render(self)
    }

    private static func countReferences(_ value: ArchivedValue, into counts: inout [Int: Int]) {
        switch value {
        case .cycle(let uid):
            counts[uid, default: 0] += 1
        case .object(let object):
            counts[object.uid, default: 0] += 1
            // Count the children only the first time: repeats are written as references.
            guard counts[object.uid] == 1 else { return }
            for child in object.content.children { countReferences(child, into: &counts) }
        case .array(let elements):
            for element in elements { countReferences(element, into: &counts) }
        case .dictionary(let entries):
            for entry in entries {
                countReferences(entry.key, into: &counts)
                countReferences(entry.value, into: &counts)
            }
        default:
            break
        }
    }
}

extension ArchivedContent {
    /// The values this content holds.
    var children: [ArchivedValue] {
        switch self {
        case .array(let values), .set(let values), .orderedSet(let values): values
        case .countedSet(let counts): counts.map(\.value)
        case .dictionary(let entries): entries.flatMap { [$0.key, $0.value] }
        case .attributedString(_, let runs): runs.map(\.attributes)
        case .number(let value): [value]
        case .url(_, let base): base.map { [$0] } ?? []
        case .value(.encoded(_, let elements)): elements
        case .fields(let fields): fields.map(\.value)
        default: []
        }
    }
}

/// Writes decoded values as JSON, each shared object once.
private struct ArchiveJSONRenderer {
    let shared: Set<Int>
    var written: Set<Int> = []

    mutating func render(_ value: ArchivedValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .integer(number)
        case .unsigned(let number): return .unsigned(number)
        case .real(let number): return number.isFinite ? .number(number) : .string("\(number)")
        case .string(let text): return .string(text)
        case .data(let bytes): return .string(Data(bytes).base64EncodedString())
        case .date(let seconds): return .string(PlistValue.iso8601(seconds))
        case .array(let elements): return .array(elements.map { render($0) })
        case .dictionary(let entries): return dictionary(entries)
        case .cycle(let uid): return ["$ref": .integer(Int64(uid))]
        case .object(let object):
            if written.contains(object.uid) { return ["$ref": .integer(Int64(object.uid))] }
            written.insert(object.uid)
            let body = content(object)
            guard shared.contains(object.uid) else { return body }
            if case .object(var members) = body {
                members["$id"] = .integer(Int64(object.uid))
                return .object(members)
            }
            return ["$id": .integer(Int64(object.uid)), "$class": .string(object.archivedClass.name), "$value": body]
        }
    }

    private mutating func dictionary(_ entries: [ArchivedEntry]) -> JSONValue {
        if entries.allSatisfy({ $0.key.stringValue != nil }), Set(entries.compactMap(\.key.stringValue)).count == entries.count {
            return .object(JSONObject(entries.map { JSONObject.Member(key: $0.key.stringValue ?? "", value: render($0.value)) }))
        }
        return .array(entries.map { ["key": render($0.key), "value": render($0.value)] })
    }

    private mutating func content(_ object: ArchivedObject) -> JSONValue {
        let name = JSONValue.string(object.archivedClass.name)
        switch object.content {
        case .array(let values), .set(let values), .orderedSet(let values): return .array(values.map { render($0) })
        case .countedSet(let counts): return .array(counts.map { ["value": render($0.value), "count": .integer($0.count)] })
        case .dictionary(let entries): return dictionary(entries)
        case .string(let text): return .string(text)
        case .data(let bytes): return .string(Data(bytes).base64EncodedString())
        case .date(let seconds): return .string(PlistValue.iso8601(seconds))
        case .number(let value): return render(value)
        case .null: return .null
        case .attributedString(let text, let runs):
            return [
                "$class": name, "string": .string(text),
                "runs": .array(
                    runs.map {
                        ["location": .integer(Int64($0.location)), "length": .integer(Int64($0.length)), "attributes": render($0.attributes)]
                    }),
            ]
        case .decimal(let text): return ["$class": name, "value": .string(text)]
        case .uuid(let uuid): return ["$class": name, "uuid": .string(uuid.text)]
        case .url(let relative, let base):
            var members: JSONObject = ["$class": name, "relative": .string(relative)]
            if let base { members["base"] = render(base) }
            return .object(members)
        case .value(let value): return nsValue(value, name)
        case .indexSet(let ranges):
            return ["$class": name, "ranges": .array(ranges.map { ["location": .integer($0.location), "length": .integer($0.length)] })]
        case .indexPath(let indexes): return ["$class": name, "indexes": .array(indexes.map { .integer(Int64($0)) })]
        case .timeZone(let zone): return ["$class": name, "name": .string(zone)]
        case .locale(let identifier): return ["$class": name, "identifier": .string(identifier)]
        case .measurement(let amount, let unit): return ["$class": name, "value": .number(amount), "unit": .string(unit)]
        case .location(let location):
            var members: JSONObject = ["$class": name, "latitude": .number(location.latitude), "longitude": .number(location.longitude)]
            for (key, value) in [
                ("altitude", location.altitude), ("horizontalAccuracy", location.horizontalAccuracy),
                ("verticalAccuracy", location.verticalAccuracy), ("speed", location.speed), ("course", location.course),
            ] {
                if let value, value.isFinite { members[key] = .number(value) }
            }
            if let timestamp = location.timestamp { members["timestamp"] = .string(PlistValue.iso8601(timestamp)) }
            return .object(members)
        case .recordID(let id): return ["$class": name, "recordName": .string(id.recordName), "zoneID": zone(id.zoneID)]
        case .zoneID(let zoneID): return ["$class": name, "zoneName": .string(zoneID.zoneName), "ownerName": .string(zoneID.ownerName)]
        case .reference(let reference):
            var members: JSONObject = [
                "$class": name, "recordID": ["recordName": .string(reference.recordID.recordName), "zoneID": zone(reference.recordID.zoneID)],
            ]
            if let action = reference.action { members["action"] = .integer(action) }
            return .object(members)
        case .fields(let fields):
            var members: [JSONObject.Member] = [.init(key: "$class", value: name)]
            if object.archivedClass.chain.count > 1 {
                members.append(.init(key: "$classes", value: .array(object.archivedClass.chain.map { .string($0) })))
            }
            for field in fields where !field.name.hasPrefix("$") || field.name.count > 1 {
                members.append(.init(key: field.name, value: render(field.value)))
            }
            return .object(JSONObject(members))
        }
    }

    private func zone(_ zone: ArchivedZoneID) -> JSONValue {
        ["zoneName": .string(zone.zoneName), "ownerName": .string(zone.ownerName)]
    }

    private mutating func nsValue(_ value: ArchivedNSValue, _ name: JSONValue) -> JSONValue {
        switch value {
        case .range(let range): return ["$class": name, "range": ["location": .integer(range.location), "length": .integer(range.length)]]
        case .point(let x, let y): return ["$class": name, "point": ["x": .number(x), "y": .number(y)]]
        case .size(let width, let height): return ["$class": name, "size": ["width": .number(width), "height": .number(height)]]
        case .rect(let x, let y, let width, let height):
            return ["$class": name, "rect": ["x": .number(x), "y": .number(y), "width": .number(width), "height": .number(height)]]
        case .edgeInsets(let top, let left, let bottom, let right):
            return ["$class": name, "edgeInsets": ["top": .number(top), "left": .number(left), "bottom": .number(bottom), "right": .number(right)]]
        case .encoded(let type, let elements): return ["$class": name, "type": .string(type), "elements": .array(elements.map { render($0) })]
        }
    }
}
