import FerryCore
import FerryJSON
import FerryPlist

/// Writes objects as `ferry dump` prints them — entity, key, URI, attributes by model type, references — straight
/// into a ``JSONWriter`` in canonical key order, without building a JSON tree (a large store has millions of them).
///
/// Values that are not plain JSON are tagged: `{"date": "2016-11-05T00:53:20.250Z"}`, `{"base64": …}`,
/// `{"decimal": "10.11"}`, `{"uuid": …}`, `{"uri": …}`, `{"external": uuid, "missing": false, "size": n}`,
/// `{"archive": …}` (a decoded keyed archive), `{"plist": …}`, `{"opaque": base64}` and `{"unexpected": …}` for a
/// stored value whose type does not match the model.
public struct ObjectJSONEncoder {
    /// Per entity: the attribute and relationship positions in key order, with their pre-escaped keys.
    private struct Layout {
        var attributes: [(index: Int, key: [UInt8])]
        var relationships: [(index: Int, key: [UInt8])]
    }

    private var layouts: [String: Layout] = [:]

    /// Creates an encoder.
    public init() {}

    /// Writes one object; `messageType` adds a `"message_type"` member (JSON Lines output of the CLI).
    public mutating func encode(_ object: ManagedObject, messageType: String? = nil, into writer: inout JSONWriter) {
        let layout = self.layout(for: object)
        writer.raw(#"{"attributes":{"#)
        for (position, entry) in layout.attributes.enumerated() {
            if position > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.raw(entry.key)
            Self.write(object.attributes[entry.index].value, into: &writer)
        }
        writer.raw(#"},"entity":"#)
        writer.string(object.entity)
        if let messageType {
            writer.raw(#","message_type":"#)
            writer.string(messageType)
        }
        writer.raw(#","pk":"#)
        writer.integer(object.primaryKey)
        if !object.problems.isEmpty {
            writer.raw(#","problems":["#)
            for (index, problem) in object.problems.enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(problem)
            }
            writer.byte(UInt8(ascii: "]"))
        }
        writer.raw(#","relationships":{"#)
        for (position, entry) in layout.relationships.enumerated() {
            if position > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.raw(entry.key)
            switch object.relationships[entry.index].value {
            case .toOne(let target):
                if let target { Self.write(target, into: &writer) } else { writer.raw("null") }
            case .toMany(let targets):
                writer.byte(UInt8(ascii: "["))
                for (index, target) in targets.enumerated() {
                    if index > 0 { writer.byte(UInt8(ascii: ",")) }
                    Self.write(target, into: &writer)
                }
                writer.byte(UInt8(ascii: "]"))
            }
        }
        writer.raw(#"},"uri":"#)
        Self.writeURI(storeUUID: object.storeUUID, entity: object.entity, primaryKey: object.primaryKey, into: &writer)
        writer.byte(UInt8(ascii: "}"))
    }

    private mutating func layout(for object: ManagedObject) -> Layout {
        if let known = layouts[object.entity], known.attributes.count == object.attributes.count,
            known.relationships.count == object.relationships.count,
            known.attributes.allSatisfy({ object.attributes.indices.contains($0.index) })
        {
            return known
        }
        func keyed(_ names: [String]) -> [(index: Int, key: [UInt8])] {
            names.enumerated().sorted { JSONWriter.keyPrecedes($0.element, $1.element) }.map { position, name in
                var key = JSONWriter()
                key.key(name)
                return (position, key.bytes)
            }
        }
        let layout = Layout(attributes: keyed(object.attributes.map(\.name)), relationships: keyed(object.relationships.map(\.name)))
        layouts[object.entity] = layout
        return layout
    }

    private static func write(_ reference: ObjectReference, into writer: inout JSONWriter) {
        writer.raw(#"{"entity":"#)
        writer.string(reference.entity)
        writer.raw(#","pk":"#)
        writer.integer(reference.primaryKey)
        writer.raw(#","uri":"#)
        writeURI(storeUUID: reference.storeUUID, entity: reference.entity, primaryKey: reference.primaryKey, into: &writer)
        writer.byte(UInt8(ascii: "}"))
    }

    /// Writes `"x-coredata://<uuid>/<Entity>/p<pk>"` piece by piece (no string is built per object).
    private static func writeURI(storeUUID: String, entity: String, primaryKey: Int64, into writer: inout JSONWriter) {
        writer.raw(#""x-coredata://"#)
        writeInsideString(storeUUID, into: &writer)
        writer.byte(UInt8(ascii: "/"))
        writeInsideString(entity, into: &writer)
        writer.raw("/p")
        writer.integer(primaryKey)
        writer.byte(UInt8(ascii: "\""))
    }

    /// Writes text inside an open JSON string: as is when nothing needs escaping (UUIDs and entity names), escaped
    /// otherwise (a hostile store's values).
    private static func writeInsideString(_ text: String, into writer: inout JSONWriter) {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
            writer.appendRaw { $0.append(contentsOf: text.utf8) }
        } else {
            var escaped = JSONWriter()
            escaped.string(text)
            writer.raw(Array(escaped.bytes.dropFirst().dropLast()))
        }
    }

    /// Writes one attribute value.
    static func write(_ value: ObjectValue, into writer: inout JSONWriter) {
        switch value {
        case .null: writer.raw("null")
        case .integer(let number): writer.integer(number)
        case .boolean(let flag): writer.bool(flag)
        case .double(let number):
            if number.isFinite { writer.double(number) } else { writer.string("\(number)") }
        case .decimal(let text): tagged("decimal", &writer) { $0.string(text) }
        case .string(let text): writer.string(text)
        case .date(let seconds):
            tagged("date", &writer) { writer in
                writer.byte(UInt8(ascii: "\""))
                writer.appendRaw { ISO8601Timestamp.append(secondsSince2001: seconds, to: &$0) }
                writer.byte(UInt8(ascii: "\""))
            }
        case .data(let bytes): tagged("base64", &writer) { $0.base64(bytes) }
        case .externalData(let external):
            writer.raw(#"{"external":"#)
            writer.string(external.uuid)
            writer.raw(#","missing":"#)
            writer.bool(external.size == nil)
            writer.raw(#","size":"#)
            if let size = external.size { writer.integer(size) } else { writer.raw("null") }
            writer.byte(UInt8(ascii: "}"))
        case .uuid(let uuid): tagged("uuid", &writer) { $0.string(uuid.text) }
        case .uri(let text): tagged("uri", &writer) { $0.string(text) }
        case .archived(let archived, _): tagged("archive", &writer) { $0.value(archived.jsonValue) }
        case .plist(let plist, _): tagged("plist", &writer) { $0.value(plist.jsonValue) }
        case .opaque(let bytes): tagged("opaque", &writer) { $0.base64(bytes) }
        case .unexpected(let raw): writeTagged("unexpected", raw, into: &writer)
        case .raw(let raw): writeTagged("raw", raw, into: &writer)
        }
    }

    /// `{"<tag>":` + what `body` writes + `}`.
    private static func tagged(_ tag: StaticString, _ writer: inout JSONWriter, _ body: (inout JSONWriter) -> Void) {
        writer.raw(#"{""#)
        writer.raw(tag)
        writer.raw(#"":"#)
        body(&writer)
        writer.byte(UInt8(ascii: "}"))
    }

    /// `{"<tag>": value}` for a value kept as SQLite stores it (`null` stays `null`).
    private static func writeTagged(_ tag: StaticString, _ raw: SQLiteValue, into writer: inout JSONWriter) {
        if case .null = raw {
            writer.raw("null")
            return
        }
        tagged(tag, &writer) { writer in
            switch raw {
            case .null: writer.raw("null")
            case .integer(let number): writer.integer(number)
            case .real(let number):
                if number.isFinite { writer.double(number) } else { writer.string("\(number)") }
            case .text(let text): writer.string(text)
            case .blob(let bytes): tagged("base64", &writer) { $0.base64(bytes) }
            }
        }
    }
}
