import FerryCore
import FerryJSON

extension Record {
    /// Writes the record as a CloudKit record dictionary in canonical form (keys sorted, no whitespace).
    /// - Parameter includeSystemFields: whether to write the change tag and created/modified stamps.
    /// - Returns: where the value of its `fields` key (`{…}`) lies in the writer's bytes.
    @discardableResult
    public func writeCloudKitJSON(to writer: inout JSONWriter, includeSystemFields: Bool = true) -> Range<Int> {
        Self.writeDictionary(system: includeSystemFields ? system : nil, to: &writer) { writer in
            for (index, field) in fields.enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.key(field.name)
                field.value.writeCloudKitJSON(to: &writer)
            }
        } identity: { writer in
            id.writeIdentity(recordType: recordType, to: &writer)
        }
    }

    /// Writes a record dictionary in canonical key order and returns where its fields object lies.
    ///
    /// The order is created, fields, modified, recordChangeTag, then the identity; the fields object's members and the
    /// identity keys are written by the caller. This is the one place that order is kept, for the record writer and
    /// ``CloudKitJSONTranscoder``.
    @discardableResult
    static func writeDictionary(
        system: SystemFields?, to writer: inout JSONWriter, fields: (inout JSONWriter) -> Void, identity: (inout JSONWriter) -> Void
    ) -> Range<Int> {
        writer.byte(UInt8(ascii: "{"))
        if let created = system?.created {
            writer.key("created")
            created.writeCloudKitJSON(to: &writer)
            writer.byte(UInt8(ascii: ","))
        }
        writer.raw("\"fields\":")
        let fieldsStart = writer.count
        writer.byte(UInt8(ascii: "{"))
        fields(&writer)
        writer.byte(UInt8(ascii: "}"))
        let fieldsEnd = writer.count
        if let modified = system?.modified {
            writer.raw(",\"modified\":")
            modified.writeCloudKitJSON(to: &writer)
        }
        if let tag = system?.changeTag {
            writer.raw(",\"recordChangeTag\":")
            writer.string(tag)
        }
        writer.byte(UInt8(ascii: ","))
        identity(&writer)
        writer.byte(UInt8(ascii: "}"))
        return fieldsStart..<fieldsEnd
    }

    /// The canonical CloudKit JSON of the whole record, system fields included: what bundles store.
    public var canonicalJSON: [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writeCloudKitJSON(to: &writer)
        return writer.bytes
    }

    /// The SHA-256 of ``canonicalJSON``: equal digests mean byte-identical records, metadata included.
    public var digest: SHA256Digest { SHA256Hasher.digest(canonicalJSON) }

    /// The SHA-256 of the canonical JSON without system fields: equal when two backends hold the same data,
    /// whatever change tags they assigned.
    public var contentDigest: SHA256Digest {
        var writer = JSONWriter(capacity: 512)
        writeCloudKitJSON(to: &writer, includeSystemFields: false)
        return SHA256Hasher.digest(writer.bytes)
    }
}

extension Deletion {
    /// Writes the deletion as `{"deleted":true,"recordName":…,"recordType":…,"zoneID":…}`.
    public func writeCloudKitJSON(to writer: inout JSONWriter) {
        writer.raw("{\"deleted\":true,")
        id.writeIdentity(recordType: recordType, to: &writer)
        writer.byte(UInt8(ascii: "}"))
    }

    /// The canonical JSON of the deletion.
    public var canonicalJSON: [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writeCloudKitJSON(to: &writer)
        return writer.bytes
    }
}

extension RecordChange {
    /// Writes the record or deletion in canonical form.
    public func writeCloudKitJSON(to writer: inout JSONWriter) {
        switch self {
        case .record(let record): record.writeCloudKitJSON(to: &writer)
        case .deletion(let deletion): deletion.writeCloudKitJSON(to: &writer)
        }
    }

    /// The canonical JSON of the record or deletion.
    public var canonicalJSON: [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writeCloudKitJSON(to: &writer)
        return writer.bytes
    }
}

extension RecordID {
    /// Writes `"recordName":…,"recordType":…,"zoneID":…`, the identity keys that end every record dictionary.
    func writeIdentity(recordType: String, to writer: inout JSONWriter) {
        writer.raw("\"recordName\":")
        writer.string(recordName)
        writer.raw(",\"recordType\":")
        writer.string(recordType)
        writer.raw(",\"zoneID\":")
        zoneID.writeCloudKitJSON(to: &writer)
    }
}

extension ZoneID {
    /// Writes `{"ownerRecordName":…,"zoneName":…}`.
    public func writeCloudKitJSON(to writer: inout JSONWriter) {
        writer.raw("{\"ownerRecordName\":")
        writer.string(ownerName)
        writer.raw(",\"zoneName\":")
        writer.string(zoneName)
        writer.byte(UInt8(ascii: "}"))
    }

    /// The zone ID as a JSON value.
    public var jsonValue: JSONValue {
        ["ownerRecordName": .string(ownerName), "zoneName": .string(zoneName)]
    }
}

extension RecordStamp {
    func writeCloudKitJSON(to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "{"))
        if let deviceID {
            writer.raw("\"deviceID\":")
            writer.string(deviceID)
            writer.byte(UInt8(ascii: ","))
        }
        writer.raw("\"timestamp\":")
        writer.integer(timestamp)
        if let userRecordName {
            writer.raw(",\"userRecordName\":")
            writer.string(userRecordName)
        }
        writer.byte(UInt8(ascii: "}"))
    }
}
