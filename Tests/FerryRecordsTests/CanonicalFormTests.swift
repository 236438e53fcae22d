import FerryCore
import FerryJSON
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct CanonicalFormTests {
    static let asset = Asset(sha256: SHA256Hasher.digest(Array("photo".utf8)), size: 5, fileName: "p.jpg")

    static let samples: [Record] = [
        TestRecords.everyType(asset: asset),
        TestRecords.vehicle("Car", index: 3, photo: asset),
        TestRecords.note(1, parent: TestRecords.vehicle("Bus", index: 1)),
        Record(recordType: "Empty", recordName: "e"),
    ]

    @Test(arguments: samples)
    func roundTripsThroughCloudKitJSON(record: Record) throws {
        let decoded = try CloudKitJSONDecoder().decode(bytes: record.canonicalJSON)
        #expect(decoded == .record(record))
    }

    @Test(arguments: samples)
    func isStableUnderGenericCanonicalisation(record: Record) throws {
        // The hand-written encoder must agree with sorting keys generically: same bytes.
        let canonical = record.canonicalJSON
        #expect(JSONWriter.canonical(try JSONParser.parse(canonical)) == canonical)
    }

    @Test func isByteForByteTheSameWhateverTheInputOrder() throws {
        let a = try CloudKitJSONDecoder().decode(
            JSONParser.parse(#"{"recordType":"T","recordName":"x","fields":{"b":{"type":"INT64","value":1},"a":{"value":"s"}}}"#))
        let b = try CloudKitJSONDecoder().decode(
            JSONParser.parse(
                #"{"fields":{"a":{"type":"STRING","value":"s"},"b":{"value":1}},"recordName":"x","recordType":"T","zoneID":{"zoneName":"_defaultZone"}}"#
            ))
        #expect(a.canonicalJSON == b.canonicalJSON)
        #expect(
            String(decoding: a.canonicalJSON, as: UTF8.self)
                == #"{"fields":{"a":{"type":"STRING","value":"s"},"b":{"type":"INT64","value":1}},"recordName":"x","recordType":"T","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"_defaultZone"}}"#
        )
    }

    @Test func contentDigestIgnoresServerMetadata() {
        var record = TestRecords.everyType()
        let withTag = record.digest
        let content = record.contentDigest
        record.system = SystemFields(changeTag: "other")
        #expect(record.digest != withTag)
        #expect(record.contentDigest == content)
        record.fields["string"] = .string("changed")
        #expect(record.contentDigest != content)
    }

    @Test func writesDeletionsWithTheDeletedFlag() {
        let deletion = Deletion(recordType: "Car", recordName: "Car.1", zoneID: ZoneID(zoneName: "CarZone"))
        #expect(
            String(decoding: deletion.canonicalJSON, as: UTF8.self)
                == #"{"deleted":true,"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#)
    }
}
