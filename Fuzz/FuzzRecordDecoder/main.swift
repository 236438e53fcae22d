// Fuzzes CloudKit record decoding and validation: any line must decode or be refused with a RecordError, never crash;
// a decoded change must re-encode canonically and decode back to itself, also with every value written before its type
// (the order other tools write, which the decoder reads through another path). A records/modify request must give its
// operations in order, each inside the input, each change round-tripping like a record's; and a text the single-record
// decoder reads must read the same as contents.
import FerryCore
import FerryJSON
import FerryRecords
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let decoder = CloudKitJSONDecoder()
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let single = try? decoder.decode(line: bytes)
    switch try? decoder.decodeContents(line: bytes) {
    case .change(let change)?:
        guard single == change else { fatalError("decodeContents and decode(line:) read a record differently") }
        check(change, decoder)
    case .request(let operations)?:
        guard single == nil else { fatalError("a request also decoded as a record") }
        var end = 0
        for operation in operations {
            guard operation.range.lowerBound >= end, operation.range.upperBound <= size else {
                fatalError("operation \(operation.range) out of order or outside the \(size) bytes")
            }
            end = operation.range.upperBound
            if case .success(let change) = operation.outcome { check(change, decoder) }
        }
    case nil:
        guard single == nil else { fatalError("decode(line:) read a record that decodeContents refused") }
    }
    // The same bytes as a stored fields object (what a PostgreSQL database gives back): decoded or refused, and a
    // record decoded so round-trips through its fields object.
    let id = (type: "T", name: "r", zone: ZoneID(zoneName: "Z"))
    if let record = try? decoder.decodeRecord(fields: bytes, recordType: id.type, recordName: id.name, zoneID: id.zone) {
        checkFields(record, decoder)
    }
    return 0
}

/// Checks that a record's fields object, cut out of its canonical JSON, decodes back to the same record.
func checkFields(_ record: Record, _ decoder: CloudKitJSONDecoder) {
    var writer = JSONWriter()
    let range = record.writeCloudKitJSON(to: &writer, includeSystemFields: false)
    let fields = Array(writer.bytes[range])
    let back = fields.withUnsafeBytes { bytes in
        try? decoder.decodeRecord(fields: bytes, recordType: record.recordType, recordName: record.recordName, zoneID: record.zoneID)
    }
    var bare = record
    bare.system = nil
    guard back == bare else { fatalError("a record's fields object does not decode back to it: \(String(decoding: fields, as: UTF8.self))") }
}

/// Validates a decoded change and checks that it round-trips through its canonical form.
func check(_ change: RecordChange, _ decoder: CloudKitJSONDecoder) {
    _ = RecordValidator().problems(in: change)
    if case .record(let record) = change {
        _ = record.estimatedSize
        var schema = RecordSchema()
        _ = schema.conflicts(in: record)
        schema.add(record)
    }
    if case .record(let record) = change { checkFields(record, decoder) }
    let canonical = change.canonicalJSON
    guard let again = try? decoder.decode(bytes: canonical), again.canonicalJSON == canonical else {
        fatalError("a decoded record does not round-trip through its canonical form")
    }
    if case .record(let record) = change {
        let reordered = valuesBeforeTypes(record)
        guard case .record(let back)? = try? decoder.decode(bytes: reordered), back.contentDigest == record.contentDigest else {
            fatalError("a record with its values before their types decodes differently: \(String(decoding: reordered, as: UTF8.self))")
        }
    }
}

/// The record's JSON without system fields, each field written `{"value":…,"type":…}`.
func valuesBeforeTypes(_ record: Record) -> [UInt8] {
    var json = JSONWriter()
    json.raw("{\"recordName\":")
    json.string(record.recordName)
    json.raw(",\"recordType\":")
    json.string(record.recordType)
    json.raw(",\"zoneID\":")
    record.zoneID.writeCloudKitJSON(to: &json)
    json.raw(",\"fields\":{")
    for (index, field) in record.fields.enumerated() {
        if index > 0 { json.byte(UInt8(ascii: ",")) }
        json.key(field.name)
        var value = JSONWriter()
        field.value.writeCloudKitJSON(to: &value)
        // {"type":"TAG","value":V} → {"value":V,"type":"TAG"}; tags contain no commas.
        let bytes = value.bytes
        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")) else { fatalError("a field without a value") }
        json.byte(UInt8(ascii: "{"))
        json.appendRaw { $0 += bytes[(comma + 1)..<(bytes.count - 1)] }
        json.byte(UInt8(ascii: ","))
        json.appendRaw { $0 += bytes[1..<comma] }
        json.byte(UInt8(ascii: "}"))
    }
    json.raw("}}")
    return json.bytes
}

runFuzzer { fuzz($0, $1) }
