import FerryCore
import FerryRecords
import Foundation

/// Builds records shaped like the seed systems' data (Cars Trucks Buses: per-type zones, notes in their parent's
/// zone with DELETE_SELF references), for tests.
public enum TestRecords {
    /// A deterministic UUID-like string for an index.
    public static func uuid(_ index: Int, salt: Int = 0) -> String {
        let value = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(salt)
        let hex = String(value, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 16 - hex.count)) + hex
        return "0E6F2A40-\(padded.prefix(4))-4\(padded.dropFirst(4).prefix(3))-8\(padded.dropFirst(7).prefix(3))-\(padded.suffix(6))000000"
    }

    /// A root record (`Car`, `Truck` or `Bus`) in its type's zone.
    public static func vehicle(_ type: String = "Car", index: Int, photo: Asset? = nil) -> Record {
        var fields: RecordFields = [
            "name": .string("\(type) \(index)"),
            "added": .timestamp(1_479_340_800_000 + Int64(index) * 1000),
            "lastUpdate": .timestamp(1_479_340_900_000 + Int64(index) * 1000),
            "mileage": .int64(Int64(index) * 1234),
            "rating": .double(Double(index) / 4),
        ]
        if let photo { fields["photo"] = .asset(photo) }
        return Record(
            recordType: type, recordName: "\(type).\(uuid(index))", zoneID: ZoneID(zoneName: "\(type)Zone"), fields: fields)
    }

    /// A note attached to a vehicle, in the vehicle's zone.
    public static func note(_ index: Int, parent: Record) -> Record {
        Record(
            recordType: "Note", recordName: "Note.\(uuid(index, salt: 7))", zoneID: parent.zoneID,
            fields: [
                "text": .string("Note \(index) — ünïcødé ✓"),
                "added": .timestamp(1_479_341_000_000 + Int64(index)),
                "parent": .reference(Reference(recordName: parent.recordName, zoneID: parent.zoneID, action: .deleteSelf)),
                "tags": .list(FieldList(.string, [.string("a"), .string("b")]) ?? .emptyUnknown),
            ])
    }

    /// An `Item` named `I.<number>` owned (DELETE_SELF) by the record named `owner` of its zone, with a text: the child
    /// records of the spool and ledger tests.
    public static func ownedItem(_ number: Int, owner: String, zone: ZoneID, text: String) -> Record {
        Record(
            recordType: "Item", recordName: "I.\(number)", zoneID: zone,
            fields: [
                "owner": .reference(Reference(recordName: owner, zoneID: zone, action: .deleteSelf)),
                "text": .string(text),
            ])
    }

    /// A record using every value type.
    public static func everyType(zone: ZoneID = ZoneID(zoneName: "AllZone"), asset: Asset? = nil) -> Record {
        var fields: RecordFields = [
            "string": .string("text \"quoted\" \\ / \n\t\u{1} ✓ 𝄞"),
            "int": .int64(Int64.min),
            "intMax": .int64(Int64.max),
            "double": .double(-1.5e-300),
            "timestamp": .timestamp(1_700_000_000_123),
            "bytes": .bytes(Data([0, 1, 2, 254, 255])),
            "reference": .reference(Reference(recordName: "Target.1", zoneID: zone, action: .validate)),
            "location": .location(
                Location(latitude: 52.52, longitude: 13.405, horizontalAccuracy: 5, altitude: 34, timestamp: 1_700_000_000_000)),
            "strings": .list(FieldList(.string, [.string("x"), .string("y")]) ?? .emptyUnknown),
            "ints": .list(FieldList(.int64, [.int64(1), .int64(-2)]) ?? .emptyUnknown),
            "doubles": .list(FieldList(.double, [.double(0.1), .double(2)]) ?? .emptyUnknown),
            "timestamps": .list(FieldList(.timestamp, [.timestamp(0)]) ?? .emptyUnknown),
            "bytesList": .list(FieldList(.bytes, [.bytes(Data([9]))]) ?? .emptyUnknown),
            "references": .list(
                FieldList(.reference, [.reference(Reference(recordName: "Target.2", zoneID: zone))]) ?? .emptyUnknown),
            "locations": .list(FieldList(.location, [.location(Location(latitude: 0, longitude: 0))]) ?? .emptyUnknown),
            "empty": .list(.emptyUnknown),
        ]
        if let asset {
            fields["asset"] = .asset(asset)
            fields["assets"] = .list(FieldList(.asset, [.asset(asset)]) ?? .emptyUnknown)
        }
        return Record(
            recordType: "Everything", recordName: "Everything.1", zoneID: zone, fields: fields,
            system: SystemFields(
                changeTag: "j7if0cac", created: RecordStamp(timestamp: 1_505_270_195_464, userRecordName: "_6936", deviceID: "4A85"),
                modified: RecordStamp(timestamp: 1_638_605_897_637, userRecordName: "_4ab8")))
    }

    /// `count` vehicles of each type with `notesPerVehicle` notes each, parents first.
    public static func fleet(vehicles count: Int, notesPerVehicle: Int = 1, types: [String] = ["Car", "Truck", "Bus"]) -> [Record] {
        var records: [Record] = []
        var noteIndex = 0
        for type in types {
            for index in 0..<count {
                let vehicle = vehicle(type, index: index)
                records.append(vehicle)
                for _ in 0..<notesPerVehicle {
                    records.append(note(noteIndex, parent: vehicle))
                    noteIndex += 1
                }
            }
        }
        return records
    }

    /// NDJSON text of records' canonical JSON, one per line.
    public static func ndjson(_ changes: [RecordChange]) -> String {
        changes.map { String(decoding: $0.canonicalJSON, as: UTF8.self) + "\n" }.joined()
    }
}
