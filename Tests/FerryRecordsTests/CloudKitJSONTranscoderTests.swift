import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite("CloudKit JSON transcoder")
struct CloudKitJSONTranscoderTests {
    /// A decoder whose `path`-form assets resolve to a made-up file of three bytes.
    static let decoder = CloudKitJSONDecoder(assetResolver: { path, fileName in
        Asset(sha256: SHA256Hasher.digest(Array(path.utf8)), size: 3, fileName: fileName ?? path)
    })
    let oracle = TranscodeOracle(decoder: Self.decoder)

    /// Records of every value type and form, some in several zones.
    static let records: [Record] = {
        var records = CanonicalRecordScannerTests.records
        records.append(TestRecords.everyType(asset: CanonicalRecordScannerTests.photo))
        records += TestRecords.fleet(vehicles: 4, notesPerVehicle: 2)
        var elsewhere = TestRecords.vehicle("Boat", index: 9)
        elsewhere.zoneID = ZoneID(zoneName: "Harbour", ownerName: "_c0ffee")
        elsewhere.fields["berth"] = .reference(Reference(recordName: "Berth.1", zoneID: elsewhere.zoneID, action: .validate))
        elsewhere.fields["other"] = .reference(Reference(recordName: "Car.x", zoneID: ZoneID(zoneName: "CarZone")))
        records.append(elsewhere)
        return records
    }()

    @Test("every record, written in every style other tools use, transcodes to the bytes decoding gives")
    func everyRecordInEveryLayout() throws {
        var transcoder = CloudKitJSONTranscoder(decoder: Self.decoder)
        var transcoded = 0
        for record in Self.records {
            for style in RecordJSONStyle.allCases {
                let line = Array(style.render(record).utf8)
                let verdict = oracle.verdict(line, transcoder: &transcoder)
                #expect(verdict.decodedRecord, "\(style): \(String(decoding: line, as: UTF8.self))")
                #expect(verdict.disagreement == nil, "\(style): \(verdict.disagreement ?? "")")
                if verdict.transcoded { transcoded += 1 }
            }
        }
        // Every style of every record is handled: none of them needs the decoder's error reporting.
        #expect(transcoded == Self.records.count * RecordJSONStyle.allCases.count)
    }

    @Test(
        "the forms the decoder reads another way transcode to what it reads",
        arguments: [
            // Values before types with spaces (what most exporters write), and zoneID after fields.
            #"{"recordName": "Car.1", "recordType": "Car", "fields": {"n": {"value": 3, "type": "INT64"}, "o": {"value": {"recordName": "Car.2", "action": "DELETE_SELF"}, "type": "REFERENCE"}}, "zoneID": {"zoneName": "CarZone", "ownerRecordName": "__defaultOwner__"}}"#,
            // Numbers in other forms: a whole double for INT64 and TIMESTAMP, an integer for DOUBLE, a Boolean, strings.
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"INT64","value":1.0},"b":{"type":"TIMESTAMP","value":2e3},"c":{"type":"DOUBLE","value":2},"d":{"type":"INT64","value":true},"e":{"type":"INT64","value":"42"},"f":{"type":"DOUBLE","value":"2.50"},"g":{"type":"DOUBLE","value":18446744073709551615}}}"#,
            // Escapes in every string position, and a record type and name that need them.
            #"{"recordName":"Car.\"1\"","recordType":"C\u0061r","zoneID":{"zoneName":"Z\u00fc"},"fields":{"s":{"type":"STRING","value":"a\nb\u00e9\/"},"l":{"type":"STRING_LIST","value":["\t",""]}},"recordChangeTag":"t\\g"}"#,
            // CloudKit's other spellings: LIST, untagged values, ASSETID, ownerName, response-only keys, null sharing.
            #"{"recordName":"Car.1","recordType":"Car","fields":{"l":{"type":"LIST","value":[1,2]},"u":{"value":"x"},"m":{"value":[{"recordName":"A"}]},"e":{"type":"LIST","value":[]},"p":{"type":"ASSETID","value":{"path":"p.jpg"}}},"zoneID":{"zoneName":"Z","ownerName":"_x","zoneType":"REGULAR_CUSTOM_ZONE"},"pluginFields":{},"parent":null}"#,
            // Null values drop their fields; empty lists keep their type; system fields in any order.
            #"{"modified":{"userRecordName":"u","timestamp":5},"recordName":"Car.1","fields":{"gone":{"value":null,"type":"STRING"},"also":{"type":"INT64","value":null},"e":{"type":"STRING_LIST","value":[]}},"recordType":"Car","created":{"timestamp":1,"deviceID":"d","extra":[1]}}"#,
            // Bytes, locations and assets in both forms, through the decoder's own code.
            #"{"recordName":"Car.1","recordType":"Car","fields":{"b":{"value":"AQID","type":"BYTES"},"w":{"value":{"longitude":2,"latitude":1.5,"timestamp":3},"type":"LOCATION"},"p":{"value":{"path":"a/b.jpg","fileName":"b.jpg"},"type":"ASSET"},"q":{"type":"ASSET_LIST","value":[{"sha256":"0000000000000000000000000000000000000000000000000000000000000ABC","size":7}]}}}"#,
            // Fields out of order, a reference into another zone, a reference list with and without zones.
            #"{"recordName":"Car.1","recordType":"Car","zoneID":{"zoneName":"CarZone"},"fields":{"z":{"type":"STRING","value":"z"},"a":{"type":"REFERENCE_LIST","value":[{"recordName":"A","action":"NONE"},{"recordName":"B","zoneID":{"zoneName":"Other","ownerRecordName":"_o"},"action":"VALIDATE"}]},"m":{"type":"REFERENCE","value":{"zoneID":{"zoneName":"Other"},"recordName":"C"}}}}"#,
        ])
    func otherForms(_ line: String) {
        let verdict = oracle.verdict(Array(line.utf8))
        #expect(verdict.decodedRecord)
        #expect(verdict.transcoded)
        #expect(verdict.disagreement == nil, "\(verdict.disagreement ?? "")")
    }

    @Test(
        "lines it leaves to the decoder are declined, and leave no output",
        arguments: [
            #"{"deleted":true,"recordName":"Car.1","recordType":"Car"}"#,
            #"{"deleted":false,"recordName":"Car.1","recordType":"Car"}"#,
            #"{"recordName":"Car.1","recordName":"Car.2","recordType":"Car"}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"STRING","value":"x"},"a":{"type":"STRING","value":"y"}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"\u0061":{"type":"STRING","value":"x"}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"é":{"type":"STRING","value":"x"}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"STRING","type":"STRING","value":"x"}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"STRING","value":1}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"INT64","value":1.5}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"INT64","value":18446744073709551615}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"TIMESTAMP","value":true}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"REFERENCE","value":{"recordName":"A","action":"CASCADE"}}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"REFERENCE","value":{"action":"NONE"}}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"ENCRYPTED_BYTES","value":"AA=="}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"STRING_LIST","value":["a",[1]]}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"value":"x"}},"extra":1}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"STRING","value":"x"}}} trailing"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"a":{"type":"STRING","value":"x"}"#,
            #"{"recordName":"Car.1","recordType":"Car","parent":{"recordName":"P"}}"#,
            #"{"recordName":1,"recordType":"Car"}"#,
            #"{"recordType":"Car"}"#,
            #"["not a record"]"#,
            "",
        ])
    func declines(_ line: String) {
        let verdict = oracle.verdict(Array(line.utf8))
        #expect(!verdict.transcoded)
        #expect(verdict.disagreement == nil, "\(verdict.disagreement ?? "")")
    }

    @Test("zones and record types are remembered across lines without mixing them up, past the cache's size")
    func manyZones() {
        var transcoder = CloudKitJSONTranscoder(decoder: Self.decoder)
        for index in 0..<40 {
            let zone = "Z\(index % 13)"
            let other = "Z\((index * 7) % 11)"
            let line = """
                {"recordName":"R.\(index)","recordType":"T\(index % 9)","zoneID":{"zoneName":"\(zone)"},"fields":{\
                "here":{"type":"REFERENCE","value":{"recordName":"A","action":"DELETE_SELF"}},\
                "there":{"type":"REFERENCE","value":{"recordName":"B","zoneID":{"zoneName":"\(other)"}}},\
                "back":{"type":"REFERENCE","value":{"recordName":"C"}}}}
                """
            let verdict = oracle.verdict(Array(line.utf8), transcoder: &transcoder)
            #expect(verdict.transcoded)
            #expect(verdict.disagreement == nil, "line \(index): \(verdict.disagreement ?? "")")
        }
    }

    @Test("an asset that cannot be resolved is declined, for the decoder to report")
    func unresolvableAsset() {
        let decoder = CloudKitJSONDecoder(assetResolver: { path, _ in throw RecordError(.assetUnavailable, at: "", "no file \(path)") })
        let line = #"{"recordName":"Car.1","recordType":"Car","fields":{"p":{"type":"ASSET","value":{"path":"gone.jpg"}}}}"#
        let verdict = TranscodeOracle(decoder: decoder).verdict(Array(line.utf8))
        #expect(!verdict.transcoded)
        #expect(!verdict.decodedRecord)
    }
}
