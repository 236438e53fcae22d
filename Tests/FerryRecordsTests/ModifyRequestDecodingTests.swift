import FerryCore
import FerryRecords
import Testing

/// CloudKit `records/modify` request bodies decoded into a change per operation (`cloudkit.md` §1.2).
@Suite struct ModifyRequestDecodingTests {
    let decoder = CloudKitJSONDecoder()

    private func contents(_ text: String) throws -> CloudKitJSONDecoder.Contents {
        try Array(text.utf8).withUnsafeBytes { try decoder.decodeContents(line: $0) }
    }

    /// The operations' outcomes, each a change or the path and rule of its error.
    private func operations(_ text: String) throws -> [Result<RecordChange, RecordError>] {
        guard case .request(let operations) = try contents(text) else {
            Issue.record("not read as a request: \(text)")
            return []
        }
        return operations.map(\.outcome)
    }

    private func failure(_ text: String) -> RecordError? {
        do {
            _ = try contents(text)
            return nil
        } catch {
            return error as? RecordError
        }
    }

    @Test func aRecordDictionaryIsOneChange() throws {
        guard case .change(.record(let record)) = try contents(#"{"recordName":"a","recordType":"T","fields":{}}"#) else {
            Issue.record("expected a record")
            return
        }
        #expect(record.recordName == "a")
    }

    @Test func wholeRecordOperationsAreRecordsAndDeletesAreDeletions() throws {
        let outcomes = try operations(
            """
            {"operations": [
              {"operationType": "create", "record": {"recordName": "a", "recordType": "T", "fields": {"n": {"value": 1}}}},
              {"operationType": "replace", "record": {"recordName": "b", "recordType": "T", "recordChangeTag": "e", "fields": {}}},
              {"operationType": "forceReplace", "desiredKeys": ["n"], "record": {"recordName": "c", "recordType": "T", "fields": {}}},
              {"record": {"recordName": "d", "recordType": "T", "recordChangeTag": "e"}, "operationType": "delete"},
              {"operationType": "forceDelete", "record": {"recordName": "e", "recordType": "T"}}
            ], "atomic": false, "numbersAsStrings": false, "desiredKeys": []}
            """)
        let changes = try outcomes.map { try $0.get() }
        #expect(changes.map(\.recordName) == ["a", "b", "c", "d", "e"])
        #expect(changes.map(\.isDeletion) == [false, false, false, true, true])
        guard case .record(let first) = changes[0], case .record(let second) = changes[1] else { return }
        #expect(first.fields["n"] == .int64(1))
        #expect(second.system?.changeTag == "e")
        #expect(changes[3] == .deletion(Deletion(recordType: "T", recordName: "d")))
    }

    @Test func recordsWithoutAZoneAreInTheRequestsZone() throws {
        let zone = ZoneID(zoneName: "CarZone", ownerName: "_owner")
        // The zone comes after the operations, as a JSON encoder that sorts keys writes it.
        let outcomes = try operations(
            """
            {"operations": [
              {"operationType": "create", "record": {"recordName": "a", "recordType": "T",
                "fields": {"r": {"value": {"recordName": "b", "action": "DELETE_SELF"}, "type": "REFERENCE"}}}},
              {"operationType": "create", "record": {"recordName": "b", "recordType": "T", "zoneID": {"zoneName": "Own"}}},
              {"operationType": "forceDelete", "record": {"recordName": "c", "recordType": "T"}}
            ], "zoneID": {"zoneName": "CarZone", "ownerRecordName": "_owner"}}
            """)
        let changes = try outcomes.map { try $0.get() }
        #expect(changes.map(\.zoneID) == [zone, ZoneID(zoneName: "Own"), zone])
        guard case .record(let record) = changes[0] else { return }
        // A reference without a zone points into its record's zone, which is the request's here.
        #expect(record.fields["r"] == .reference(Reference(recordName: "b", zoneID: zone, action: .deleteSelf)))
        let withoutZone = try operations(#"{"operations": [{"operationType": "create", "record": {"recordName": "a", "recordType": "T"}}]}"#)
        #expect(try withoutZone.first?.get().zoneID == .default)
    }

    @Test func anOperationThatCannotBePackedIsAnErrorOfItsOwn() throws {
        let outcomes = try operations(
            """
            {"operations": [
              {"operationType": "update", "record": {"recordName": "a", "recordChangeTag": "e", "fields": {}}},
              {"operationType": "forceUpdate", "record": {"recordName": "b", "recordType": "T", "fields": {}}},
              {"operationType": "delete", "record": {"recordName": "c", "recordChangeTag": "e"}},
              {"operationType": "upsert", "record": {"recordName": "d", "recordType": "T"}},
              {"operationType": "create", "record": {"recordName": "e", "fields": {}}},
              {"operationType": "create", "record": {"recordName": "f", "recordType": "T", "fields": {"x": {"value": 1, "type": "NOPE"}}}},
              {"operationType": "create"},
              {"record": {"recordName": "g", "recordType": "T"}},
              {"operationType": "create", "record": {"recordName": "h", "recordType": "T"}, "extra": 1},
              {"operationType": "create", "record": {"recordName": "i", "recordType": "T", "deleted": true}},
              {"operationType": "create", "operationType": "delete", "record": {"recordName": "j", "recordType": "T"}},
              "create",
              {"operationType": "create", "record": {"recordName": "k", "recordType": "T"}}
            ]}
            """)
        let errors = outcomes.map { outcome -> String in
            switch outcome {
            case .success(let change): "ok \(change.recordName)"
            case .failure(let error): "\(error.code) \(error.path)"
            }
        }
        #expect(
            errors == [
                "record.unsupported operations[0].operationType",
                "record.unsupported operations[1].operationType",
                "record.invalid-record operations[2].record.recordType",
                "record.invalid-record operations[3].operationType",
                "record.invalid-record operations[4].record.recordType",
                "record.invalid-record operations[5].record.fields.x.type",
                "record.invalid-record operations[6].record",
                "record.invalid-record operations[7].operationType",
                "record.invalid-record operations[8].extra",
                "record.invalid-record operations[9].record.deleted",
                "record.invalid-json operations[10].operationType",
                "record.invalid-record operations[11]",
                "ok k",
            ])
        if case .failure(let error) = outcomes[1] { #expect(error.reason.contains("forceReplace")) }
        if case .failure(let error) = outcomes[2] { #expect(error.reason.contains("add \"recordType\"")) }
    }

    @Test func operationsKnowWhereTheyAreInTheRequest() throws {
        let text = #"{"zoneID": {"zoneName": "Z"}, "operations": [ {"operationType": "create", "record": {"recordName": "a", "recordType": "T"}} ]}"#
        guard case .request(let operations) = try contents(text) else {
            Issue.record("not read as a request")
            return
        }
        let start = try #require(text.utf8.firstIndex(of: UInt8(ascii: "[")))
        let offset = text.utf8.distance(from: text.utf8.startIndex, to: start) + 2
        let operation = #"{"operationType": "create", "record": {"recordName": "a", "recordType": "T"}}"#
        #expect(operations.map(\.range) == [offset..<(offset + operation.utf8.count)])
    }

    @Test func aMalformedRequestIsOneError() {
        let cases: [(String, String)] = [
            (#"{"operations": {}}"#, "operations"),
            (#"{"atomic": true}"#, "operations"),
            (#"{"operations": [], "syncToken": "x"}"#, "syncToken"),
            (#"{"operations": [], "operations": []}"#, "operations"),
            (#"{"operations": [], "atomic": "yes"}"#, "atomic"),
            (#"{"operations": [], "zoneID": {"zoneName": 3}}"#, "zoneID.zoneName"),
            (#"{"operations": [{"operationType": "create"}"#, ""),
            (#"{"operations": []} trailing"#, ""),
        ]
        for (text, path) in cases {
            let error = failure(text)
            #expect(error?.path == path, "\(text): \(String(describing: error))")
        }
        #expect(failure(#"{"operations": [,]}"#)?.code == .invalidJSON)
    }

    @Test func theSingleRecordDecoderNamesARequestForWhatItIs() {
        let bytes = Array(#"{"operations": []}"#.utf8)
        do {
            _ = try bytes.withUnsafeBytes { try decoder.decode(line: $0) }
            Issue.record("a request decoded as a record")
        } catch {
            let error = error as? RecordError
            #expect(error?.path == "operations")
            #expect(error?.reason.contains("records/modify request") == true)
        }
    }

    @Test func anEmptyRequestHasNoOperations() throws {
        #expect(try operations(#"{"operations": []}"#).isEmpty)
    }
}
