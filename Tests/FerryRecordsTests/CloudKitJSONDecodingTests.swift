import FerryCore
import FerryJSON
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct CloudKitJSONDecodingTests {
    let decoder = CloudKitJSONDecoder()

    private func record(_ text: String) throws -> Record {
        guard case .record(let record) = try decoder.decode(JSONParser.parse(text)) else {
            throw CoreError(.readFailed, "expected a record")
        }
        return record
    }

    private func failure(_ text: String) -> RecordError? {
        do {
            _ = try decoder.decode(JSONParser.parse(text))
            return nil
        } catch let error as RecordError {
            return error
        } catch {
            return RecordError(.invalidJSON, at: "", "\(error)")
        }
    }

    @Test func decodesARealCloudKitLookupResponse() throws {
        // cloudkit-examples/07: a real public-database record, with response-only keys.
        let record = try record(
            """
            {"recordName":"2F95E45A-3900-4BF3-86D2-85F139AD3F15","recordType":"Mapping","fields":{
            "country":{"value":"US","type":"STRING"},"checkedAt":{"value":1638605892474,"type":"TIMESTAMP"},
            "tmdbID":{"value":249333,"type":"INT64"}},"pluginFields":{},"recordChangeTag":"j7if0cac",
            "created":{"timestamp":1505270195464,"userRecordName":"_6936fa6af985df311dcf19d47271a5ff","deviceID":"4A85"},
            "modified":{"timestamp":1638605897637,"userRecordName":"_4ab84f2560e93224e4c1b40e97b24ae5","deviceID":"2"},
            "deleted":false,"zoneID":{"zoneName":"_defaultZone","ownerRecordName":"_4ab84f2560e93224e4c1b40e97b24ae5","zoneType":"DEFAULT_ZONE"}}
            """)
        #expect(record.recordType == "Mapping")
        #expect(record.zoneID == ZoneID(zoneName: "_defaultZone", ownerName: "_4ab84f2560e93224e4c1b40e97b24ae5"))
        #expect(record.fields["checkedAt"] == .timestamp(1_638_605_892_474))
        #expect(record.fields["tmdbID"] == .int64(249_333))
        #expect(record.system?.changeTag == "j7if0cac")
        #expect(
            record.system?.created == RecordStamp(timestamp: 1_505_270_195_464, userRecordName: "_6936fa6af985df311dcf19d47271a5ff", deviceID: "4A85")
        )
    }

    @Test func decodesAppleCreateRequestWithoutTypeTags() throws {
        // cloudkit-examples/01: untagged values are inferred as CloudKit does.
        let record = try record(
            #"{"recordType":"Artist","fields":{"firstName":{"value":"Mei"},"n":{"value":3},"d":{"value":2.5},"b":{"value":true},"r":{"value":{"recordName":"X","action":"NONE"}},"l":{"value":[1,2]}},"recordName":"Mei Chen"}"#
        )
        #expect(record.zoneID == .default)
        #expect(record.fields["firstName"] == .string("Mei"))
        #expect(record.fields["n"] == .int64(3))
        #expect(record.fields["d"] == .double(2.5))
        #expect(record.fields["b"] == .int64(1))
        #expect(record.fields["r"] == .reference(Reference(recordName: "X", zoneID: .default)))
        #expect(record.fields["l"] == .list(try #require(FieldList(.int64, [.int64(1), .int64(2)]))))
    }

    @Test func acceptsTypedAndBareListTags() throws {
        let typed = try record(#"{"recordName":"a","recordType":"T","fields":{"x":{"value":["p","q"],"type":"STRING_LIST"}}}"#)
        let bare = try record(#"{"recordName":"a","recordType":"T","fields":{"x":{"value":["p","q"],"type":"LIST"}}}"#)
        #expect(typed == bare)
        let empty = try record(#"{"recordName":"a","recordType":"T","fields":{"x":{"value":[],"type":"LIST"}}}"#)
        #expect(empty.fields["x"]?.type == .list(nil))
        #expect(empty.fields["x"]?.type.tag == "UNKNOWN_LIST")
    }

    @Test func acceptsNumbersAsStringsAndOwnerNameAlias() throws {
        let record = try record(
            #"{"recordName":"a","recordType":"T","zoneID":{"zoneName":"Z","ownerName":"_u"},"fields":{"i":{"value":"42","type":"INT64"},"t":{"value":"5","type":"TIMESTAMP"},"d":{"value":"1.5","type":"DOUBLE"}}}"#
        )
        #expect(record.zoneID == ZoneID(zoneName: "Z", ownerName: "_u"))
        #expect(record.fields["i"] == .int64(42))
        #expect(record.fields["t"] == .timestamp(5))
        #expect(record.fields["d"] == .double(1.5))
    }

    @Test func referencesDefaultToTheRecordsZone() throws {
        let record = try record(
            #"{"recordName":"n","recordType":"Note","zoneID":{"zoneName":"CarZone"},"fields":{"car":{"value":{"recordName":"Car.1","action":"DELETE_SELF"},"type":"REFERENCE"}}}"#
        )
        #expect(record.fields["car"] == .reference(Reference(recordName: "Car.1", zoneID: ZoneID(zoneName: "CarZone"), action: .deleteSelf)))
    }

    @Test func decodesDeletionsAndDropsNullFields() throws {
        let change = try decoder.decode(
            JSONParser.parse(#"{"recordName":"Car.9","recordType":"Car","deleted":true,"zoneID":{"zoneName":"CarZone"}}"#))
        #expect(change == .deletion(Deletion(recordType: "Car", recordName: "Car.9", zoneID: ZoneID(zoneName: "CarZone"))))
        let record = try record(#"{"recordName":"a","recordType":"T","fields":{"gone":{"value":null}}}"#)
        #expect(record.fields.isEmpty)
    }

    @Test(arguments: [
        (#"[]"#, "", "expected a record object"),
        (#"{"recordType":"T"}"#, "recordName", "missing"),
        (#"{"recordName":"a","recordType":"T","feilds":{}}"#, "feilds", "unknown record key"),
        // What CloudKit puts in a response's "records" where a record failed.
        (
            #"{"recordName":"a","reason":"Record not found","serverErrorCode":"NOT_FOUND"}"#, "",
            "CloudKit answered with the error NOT_FOUND (Record not found) here instead of a record"
        ),
        (#"{"serverErrorCode":"ZONE_NOT_FOUND"}"#, "", "the error ZONE_NOT_FOUND here"),
        (#"{"recordName":"a","recordType":"T","reason":"x"}"#, "reason", "unknown record key"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":1,"type":"STRNG"}}}"#, "fields.x.type", "unknown type tag"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":1.5,"type":"INT64"}}}"#, "fields.x.value", "whole number for INT64"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":1.5,"type":"TIMESTAMP"}}}"#, "fields.x.value", "whole milliseconds"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":"%%%","type":"BYTES"}}}"#, "fields.x.value", "base64"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":[1,"a"],"type":"LIST"}}}"#, "fields.x.value[1]", "whole number for INT64"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":{"latitude":1}}}}"#, "fields.x.value.longitude", "missing"),
        (
            #"{"recordName":"a","recordType":"T","fields":{"x":{"value":{"recordName":"b","action":"CASCADE"},"type":"REFERENCE"}}}"#,
            "fields.x.value.action", "DELETE_SELF"
        ),
        (
            #"{"recordName":"a","recordType":"T","fields":{"x":{"value":{"fileChecksum":"AYz","size":3},"type":"ASSETID"}}}"#, "fields.x.value",
            "no content hash"
        ),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":{"path":"a.jpg"},"type":"ASSET"}}}"#, "fields.x.value.path", "--assets"),
        (#"{"recordName":"a","recordType":"T","fields":{"x":{"value":"R01=","type":"ENCRYPTED_BYTES"}}}"#, "fields.x.type", "encrypted"),
        (#"{"recordName":"a","recordType":"T","share":{"recordName":"s"}}"#, "share", "sharing"),
        (#"{"recordName":"a","recordType":"T","deleted":true,"fields":{"x":{"value":1}}}"#, "fields", "cannot have fields"),
    ])
    func explainsWhatIsWrongAndWhere(text: String, path: String, reason: String) throws {
        let error = try #require(failure(text))
        #expect(error.path == path)
        #expect(error.reason.contains(reason), "\(error.reason)")
    }

    @Test func resolvesAssetPathsThroughTheResolver() throws {
        let digest = SHA256Hasher.digest(Array("x".utf8))
        let decoder = CloudKitJSONDecoder { path, fileName in
            #expect(path == "photos/a.jpg")
            return Asset(sha256: digest, size: 1, fileName: fileName ?? "a.jpg")
        }
        let change = try decoder.decode(
            JSONParser.parse(#"{"recordName":"a","recordType":"T","fields":{"p":{"value":{"path":"photos/a.jpg"},"type":"ASSET"}}}"#))
        guard case .record(let record) = change else { throw CoreError(.readFailed, "not a record") }
        #expect(record.fields["p"] == .asset(Asset(sha256: digest, size: 1, fileName: "a.jpg")))
    }
}

/// Records as they come from other tools: the value before its type, escapes in keys and tags.
///
/// These go through the decoder's raw-byte path (not a canonical rewrite first).
@Suite struct CloudKitJSONFieldOrderTests {
    let decoder = CloudKitJSONDecoder()
    static let digest = String(repeating: "ab", count: 32)

    private func decode(_ text: String) throws(RecordError) -> RecordChange {
        try decoder.decode(bytes: Array(text.utf8))
    }

    private func line(field: String) -> String {
        #"{"recordName":"r1","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"f":\#(field)}}"#
    }

    @Test(arguments: [
        (#""x""#, "STRING"), ("5", "INT64"), ("5", "TIMESTAMP"), ("5", "DOUBLE"), ("2.5", "DOUBLE"), (#""12""#, "INT64"),
        ("true", "INT64"), (#""AAEC""#, "BYTES"), (#"{"recordName":"a"}"#, "REFERENCE"),
        (#"{"recordName":"a","zoneID":{"zoneName":"Z"},"action":"DELETE_SELF"}"#, "REFERENCE"), ("[]", "STRING_LIST"),
        (#"["a","b"]"#, "STRING_LIST"), ("[1,2]", "TIMESTAMP_LIST"), ("[1,2.5]", "DOUBLE_LIST"),
        (#"[{"recordName":"a"},{"recordName":"b"}]"#, "REFERENCE_LIST"), (#"{"latitude":1,"longitude":2}"#, "LOCATION"),
        (#"{"sha256":"\#(digest)","size":3}"#, "ASSET"), ("null", "STRING"), ("[]", "LIST"),
    ])
    func valueBeforeTypeDecodesAsTypeBeforeValue(value: String, type: String) throws {
        let valueFirst = try decode(line(field: #"{"value":\#(value),"type":"\#(type)"}"#))
        let typeFirst = try decode(line(field: #"{"type":"\#(type)","value":\#(value)}"#))
        #expect(valueFirst == typeFirst)
        #expect(valueFirst.canonicalJSON == typeFirst.canonicalJSON)
    }

    @Test func valueBeforeTypeGetsTheTypesValueNotTheLookalike() throws {
        guard case .record(let record) = try decode(line(field: #"{"value":5,"type":"TIMESTAMP"}"#)) else {
            Issue.record("expected a record")
            return
        }
        #expect(record.fields["f"] == .timestamp(5))
        guard case .record(let empty) = try decode(line(field: #"{"value":[],"type":"STRING_LIST"}"#)) else { return }
        #expect(empty.fields["f"]?.type == .list(.string))
        guard case .record(let reference) = try decode(line(field: #"{"value":{"recordName":"a"},"type":"REFERENCE"}"#)) else { return }
        #expect(reference.fields["f"] == .reference(Reference(recordName: "a", zoneID: ZoneID(zoneName: "Z"))))
    }

    @Test(arguments: [
        (#""x""#, "INT64"), (#"[1,"a"]"#, "INT64_LIST"), (#"{"latitude":1}"#, "LOCATION"), (#"{"recordName":1}"#, "REFERENCE"),
        ("1.5", "TIMESTAMP"), (#""x""#, "NOPE"),
    ])
    func badValuesFailTheSameWayInEitherOrder(value: String, type: String) {
        func error(_ text: String) -> RecordError? {
            do {
                _ = try decode(text)
                return nil
            } catch {
                return error
            }
        }
        let valueFirst = error(line(field: #"{"value":\#(value),"type":"\#(type)"}"#))
        let typeFirst = error(line(field: #"{"type":"\#(type)","value":\#(value)}"#))
        #expect(valueFirst != nil)
        #expect(valueFirst?.path == typeFirst?.path)
        #expect(valueFirst?.reason == typeFirst?.reason)
    }

    @Test func escapedKeysTagsAndDigestsMeanWhatTheySpell() throws {
        let text = #"""
            {"recordN\u0061me":"r1","recordType":"T","zoneID":{"zoneName":"Z","ownerRecordName":"\u005f_defaultOwner__"},
            "fields":{"f":{"type":"ST\u0052ING","value":"x"},"g":{"value":{"sh\u0061256":"\u0061\#(Self.digest.dropFirst())","size":1},
            "type":"ASSET"},"h":{"value":{"recordName":"a","action":"DELETE\u005fSELF"},"type":"REFERENCE"}}}
            """#
        guard case .record(let record) = try decode(text) else {
            Issue.record("expected a record")
            return
        }
        #expect(record.recordName == "r1")
        #expect(record.zoneID == ZoneID(zoneName: "Z"))
        #expect(record.fields["f"] == .string("x"))
        #expect(record.fields["g"]?.assets.first?.sha256.hex == Self.digest)
        #expect(record.fields["h"]?.references.first?.action == .deleteSelf)
    }
}
