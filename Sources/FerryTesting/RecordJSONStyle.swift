import FerryCore
import FerryJSON
import FerryRecords

/// The ways other tools lay out the same CloudKit record dictionary, for tests of readers that must not care.
public enum RecordJSONStyle: CaseIterable, Sendable {
    /// Canonical: keys sorted, no spaces.
    case canonical
    /// Every object's keys reversed (values before types, zoneID and fields before the name), with spaces.
    case reversed
    /// References without a zone ID where they point into the record's zone, and keys reversed.
    case zonelessReferences

    /// The record (or deletion) written this way.
    public func render(_ change: RecordChange) -> String {
        // Canonical JSON always parses: it is written by Ferry.
        guard let tree = try? JSONParser.parse(change.canonicalJSON) else { preconditionFailure("canonical JSON does not parse") }
        var text = ""
        write(tree, zoneID: change.zoneID, into: &text)
        return text
    }

    /// The record written this way.
    public func render(_ record: Record) -> String { render(.record(record)) }

    private func write(_ value: JSONValue, zoneID: ZoneID, into text: inout String) {
        let spaced = self != .canonical
        switch value {
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += spaced ? ", " : "," }
                write(element, zoneID: zoneID, into: &text)
            }
            text += "]"
        case .object(let object):
            var members = object.members
            if self == .zonelessReferences, object["action"] != nil, object["zoneID"] == .some(zoneID.jsonValue) {
                members.removeAll { $0.key == "zoneID" }
            }
            if self != .canonical { members.reverse() }
            text += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { text += spaced ? ", " : "," }
                text += String(decoding: JSONWriter.canonical(.string(member.key)), as: UTF8.self) + (spaced ? ": " : ":")
                write(member.value, zoneID: zoneID, into: &text)
            }
            text += "}"
        default:
            text += String(decoding: JSONWriter.canonical(value), as: UTF8.self)
        }
    }
}
