import FerryCore
import FerryPlist
import Foundation

extension ManagedObject {
    /// The object as `ferry dump` prints it: entity, key, URI, typed attributes and references.
    public var jsonValue: JSONValue {
        var attributes: [JSONObject.Member] = []
        for (name, value) in self.attributes { attributes.append(.init(key: name, value: value.jsonValue)) }
        var relationships: [JSONObject.Member] = []
        for (name, value) in self.relationships {
            switch value {
            case .toOne(let target): relationships.append(.init(key: name, value: target?.jsonValue ?? .null))
            case .toMany(let targets): relationships.append(.init(key: name, value: .array(targets.map(\.jsonValue))))
            }
        }
        var members: [JSONObject.Member] = [
            .init(key: "entity", value: .string(entity)), .init(key: "pk", value: .integer(primaryKey)), .init(key: "uri", value: .string(uri)),
            .init(key: "attributes", value: .object(JSONObject(attributes))),
            .init(key: "relationships", value: .object(JSONObject(relationships))),
        ]
        if !problems.isEmpty { members.append(.init(key: "problems", value: .array(problems.map { .string($0) }))) }
        return .object(JSONObject(members))
    }
}

extension ObjectReference {
    /// `{"entity": …, "pk": …, "uri": …}`.
    public var jsonValue: JSONValue { ["entity": .string(entity), "pk": .integer(primaryKey), "uri": .string(uri)] }
}

extension ObjectValue {
    /// A value as JSON: plain for strings and numbers, tagged for the rest (`{"date": …}`, `{"base64": …}`, …).
    public var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .integer(let number): .integer(number)
        case .boolean(let flag): .bool(flag)
        case .double(let number): number.isFinite ? .number(number) : .string("\(number)")
        case .decimal(let text): ["decimal": .string(text)]
        case .string(let text): .string(text)
        case .date(let seconds): ["date": .string(PlistValue.iso8601(seconds))]
        case .data(let bytes): ["base64": .string(Data(bytes).base64EncodedString())]
        case .externalData(let external):
            [
                "external": .string(external.uuid), "size": external.size.map { .integer($0) } ?? .null,
                "missing": .bool(external.size == nil),
            ]
        case .uuid(let uuid): ["uuid": .string(uuid.uuidString)]
        case .uri(let text): ["uri": .string(text)]
        case .archived(let value): ["archive": value.jsonValue]
        case .plist(let value): ["plist": value.jsonValue]
        case .opaque(let bytes): ["opaque": .string(Data(bytes).base64EncodedString())]
        case .unexpected(let raw):
            switch raw {
            case .null: .null
            case .integer(let number): ["unexpected": .integer(number)]
            case .real(let number): ["unexpected": .number(number)]
            case .text(let text): ["unexpected": .string(text)]
            case .blob(let bytes): ["unexpected": ["base64": .string(Data(bytes).base64EncodedString())]]
            }
        }
    }
}
