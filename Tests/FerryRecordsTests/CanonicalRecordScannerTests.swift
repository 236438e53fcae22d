import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite("Canonical record scanner")
struct CanonicalRecordScannerTests {
    static let zone = ZoneID(zoneName: "CarZone")
    static let photo = Asset(sha256: SHA256Hasher.digest(Array("photo".utf8)), size: 5, fileName: "photo.jpg")

    /// Records using every form the scanner handles.
    static let records: [Record] = {
        let car = TestRecords.vehicle(index: 3, photo: photo)
        func reference(_ name: String, _ action: Reference.Action) -> FieldValue {
            .reference(Reference(recordName: name, zoneID: zone, action: action))
        }
        func list(_ type: ScalarType, _ elements: [FieldValue]) -> FieldValue { .list(FieldList(type, elements) ?? .emptyUnknown) }
        let everything = Record(
            recordType: "Car", recordName: "Car.every-form ~!", zoneID: zone,
            fields: [
                "text": .string("ünïcødé ✓ 𝄞 \u{7F} end"), "empty": .string(""),
                "small": .int64(Int64.min), "large": .int64(Int64.max), "zero": .int64(0), "negative": .int64(-42),
                "when": .timestamp(-1), "ratio": .double(-0.0), "tiny": .double(1e-05), "huge": .double(5e+20),
                "most": .double(.greatestFiniteMagnitude), "round": .double(100),
                "b0": .bytes(Data()), "b1": .bytes(Data([0xFF])), "b2": .bytes(Data([1, 2])), "b3": .bytes(Data([1, 2, 3])),
                "b4": .bytes(Data([0, 0, 0, 0xFE])),
                "plain": reference("Car.A", .none), "checked": reference("Car.B", .validate), "owner": reference("Car.C", .deleteSelf),
                "owners": list(.reference, [reference("Car.D", .deleteSelf), reference("Car.E", .none), reference("Car.D", .deleteSelf)]),
                "bare": .asset(Asset(sha256: .zero, size: 0)), "photos": list(.asset, [.asset(photo), .asset(photo)]),
                "numbers": list(.int64, [.int64(1), .int64(-2)]), "ratios": list(.double, [.double(0.5)]),
                "words": list(.string, [.string("a"), .string("ü")]), "blobs": list(.bytes, [.bytes(Data([9]))]),
                "stamps": list(.timestamp, [.timestamp(0)]),
            ])
        let fieldless = Record(recordType: "Car", recordName: "Car.nothing", zoneID: zone, fields: [:])
        var stamped = TestRecords.vehicle(index: 4)
        stamped.system = SystemFields(
            changeTag: "3k", created: RecordStamp(timestamp: 1_700_000_000_000, userRecordName: "_abc", deviceID: "D1"),
            modified: RecordStamp(timestamp: 1_700_000_000_001))
        var tagged = fieldless
        tagged.recordName = "Car.tagged"
        tagged.system = SystemFields(changeTag: "", modified: RecordStamp(timestamp: -5, userRecordName: "ü"))
        return [car, TestRecords.note(1, parent: car), everything, fieldless, stamped, tagged]
    }()

    static let schema: RecordSchema = {
        var schema = RecordSchema()
        for record in records { schema.add(record) }
        return schema
    }()

    private func oracle(_ type: String = "Car") -> CanonicalScanOracle {
        CanonicalScanOracle(recordType: type, zoneID: Self.zone, schema: Self.schema)
    }

    @Test("canonical records of every handled form are accepted, with the key, DELETE_SELF targets and assets decoding finds")
    func acceptsEveryForm() {
        for record in Self.records {
            let verdict = oracle(record.recordType).verdict(record.canonicalJSON)
            #expect(verdict.scannerAccepted, "declined \(record.recordName)")
            #expect(verdict.fullyValid)
            #expect(verdict.disagreement == nil, "\(verdict.disagreement ?? "")")
        }
    }

    @Test("the facts of an accepted line: its key, each DELETE_SELF target in field order, each asset")
    func facts() throws {
        let car = Self.records[0]
        let note = Self.records[1]
        guard var scanner = CanonicalRecordScanner(recordType: "Note", zoneID: Self.zone, fieldTypes: Self.schema.recordTypes["Note"]) else {
            Issue.record("no scanner for a valid file")
            return
        }
        var facts = CanonicalRecordScanner.Facts()
        let key = note.canonicalJSON.withUnsafeBytes { scanner.accept($0, index: 4, into: &facts) }
        #expect(key == RecordKey(note.id))
        #expect(facts.deleteSelf.map(\.line) == [4])
        #expect(facts.deleteSelf.map(\.target) == [RecordKey(car.id)])
        guard var cars = CanonicalRecordScanner(recordType: "Car", zoneID: Self.zone, fieldTypes: Self.schema.recordTypes["Car"]) else { return }
        _ = car.canonicalJSON.withUnsafeBytes { cars.accept($0, index: 0, into: &facts) }
        #expect(facts.assets.map(\.sha256) == [Self.photo.sha256])
        #expect(facts.assets.map(\.size) == [5])
    }

    @Test(
        "lines that are not canonical, not valid, or not of a handled form are declined",
        arguments: [
            // Not canonical: spaces, escapes, number forms, base64 with stray bits, uppercase hex, unsorted keys.
            #"{"fields": {},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"text":{"type":"STRING","value":"a\"b"}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"text":{"type":"STRING","value":"\u00e9"}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"zero":{"type":"INT64","value":-0}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"zero":{"type":"INT64","value":07}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"large":{"type":"INT64","value":9223372036854775808}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"ratio":{"type":"DOUBLE","value":1.50}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"ratio":{"type":"DOUBLE","value":2}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"ratio":{"type":"DOUBLE","value":1e400}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"b1":{"type":"BYTES","value":"QR=="}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"b1":{"type":"BYTES","value":"QQ"}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"bare":{"type":"ASSET","value":{"sha256":"0000000000000000000000000000000000000000000000000000000000000ABC","size":0}}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"zero":{"type":"INT64","value":0},"text":{"type":"STRING","value":""}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            // Not valid: a name starting with "_", a reserved or unknown field, a field of another type, a cross-zone
            // reference, a negative asset size, a record of another type or zone.
            #"{"fields":{},"recordName":"_Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"recordType":{"type":"STRING","value":"x"}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"unknown":{"type":"STRING","value":"x"}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"text":{"type":"INT64","value":1}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"owner":{"type":"REFERENCE","value":{"action":"DELETE_SELF","recordName":"Car.C","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"BusZone"}}}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{"bare":{"type":"ASSET","value":{"sha256":"0000000000000000000000000000000000000000000000000000000000000000","size":-1}}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{},"recordName":"Car.1","recordType":"Note","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"fields":{},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"BusZone"}}"#,
            // Valid and canonical, but of forms left to the full checks: a deletion, a location. Not canonical: a
            // stamp's keys out of order.
            #"{"fields":{"where":{"type":"LOCATION","value":{"latitude":1.0,"longitude":2.0}}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"created":{"timestamp":1,"deviceID":"D"},"fields":{},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            #"{"deleted":true,"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
        ])
    func declines(_ line: String) {
        let verdict = oracle().verdict(Array(line.utf8))
        #expect(!verdict.scannerAccepted)
    }

    @Test(
        "malformed UTF-8 in a string is declined (the decoder would replace it)",
        arguments: [
            [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x9C], [0xF8, 0x80, 0x80, 0x80, 0x80], [0x0A],
        ] as [[UInt8]])
    func declinesMalformedUTF8(_ bytes: [UInt8]) {
        let line =
            Array(#"{"fields":{"text":{"type":"STRING","value":""#.utf8) + bytes
            + Array(#""}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#.utf8)
        let verdict = oracle().verdict(line)
        #expect(!verdict.scannerAccepted)
        #expect(!verdict.fullyValid)
    }

    @Test("a file whose type is not in the schema, or whose type or zone is invalid, gets no scanner")
    func noScannerForBadFiles() {
        #expect(CanonicalRecordScanner(recordType: "Boat", zoneID: Self.zone, fieldTypes: nil) == nil)
        #expect(CanonicalRecordScanner(recordType: "1Car", zoneID: Self.zone, fieldTypes: [:]) == nil)
        #expect(CanonicalRecordScanner(recordType: "Car", zoneID: ZoneID(zoneName: "bad zone"), fieldTypes: [:]) == nil)
    }

    @Test("no line one byte away from a valid one is accepted unless the full checks accept it with the same facts")
    func mutationsAgree() {
        let replacements = Array(#"" \-0_.e+}],:{[aA=9"#.utf8) + [0x00, 0x7F, 0x80, 0xBF, 0xC3, 0xE2, 0xFF]
        var accepted = 0
        var mutants = 0
        for record in Self.records {
            let oracle = oracle(record.recordType)
            let line = record.canonicalJSON
            for position in line.indices {
                var variants = [Array(line[..<position] + line[(position + 1)...])]
                for byte in replacements where byte != line[position] {
                    var changed = line
                    changed[position] = byte
                    variants.append(changed)
                }
                for variant in variants {
                    mutants += 1
                    let verdict = oracle.verdict(variant)
                    if verdict.scannerAccepted { accepted += 1 }
                    #expect(verdict.disagreement == nil, "\(verdict.disagreement ?? ""): \(String(decoding: variant, as: UTF8.self))")
                }
            }
        }
        // Not vacuous: many mutants are still valid records (another digit, another letter) and are accepted.
        #expect(accepted > 1000, "\(accepted) of \(mutants) mutants accepted")
    }
}
