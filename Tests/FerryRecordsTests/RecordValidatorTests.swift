import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct RecordValidatorTests {
    let validator = RecordValidator()

    private func rules(_ record: Record) -> [RecordRule] { validator.problems(in: record).map(\.rule) }

    @Test func acceptsSeedShapedRecords() {
        for record in TestRecords.fleet(vehicles: 2) + [TestRecords.everyType()] {
            #expect(validator.problems(in: record).isEmpty, "\(record.recordName): \(validator.problems(in: record))")
        }
    }

    @Test(arguments: [
        ("", true), ("_private", true), ("Car.é", true), (String(repeating: "x", count: 256), true), ("a\nb", true),
        ("Car.0E6F2A40-1234", false), ("SBGame|~|A1B2", false), ("Mei Chen", false), (String(repeating: "x", count: 255), false),
    ])
    func checksRecordNames(name: String, invalid: Bool) {
        let record = Record(recordType: "T", recordName: name)
        #expect(rules(record).contains(.recordName) == invalid)
    }

    @Test func whatOnlyCloudKitRefusesFromClientsIsAWarningUnlessEnforced() {
        let zone = ZoneID(zoneName: "Z")
        let record = Record(
            recordType: "T", recordName: "_0123456789abcdef0123456789abcdef", zoneID: zone,
            fields: ["owner": .reference(Reference(recordName: "_fedcba", zoneID: zone)), "blob": .bytes(Data(repeating: 1, count: 1_000_001))])
        let lenient = validator.problems(in: record)
        #expect(lenient.count == 3 && lenient.allSatisfy { $0.severity == .warning }, "\(lenient)")
        var limits = RecordValidator.Limits()
        limits.enforcesCloudKitClientRules = true
        let strict = RecordValidator(limits: limits).problems(in: record)
        #expect(strict.count == 3 && strict.allSatisfy { $0.severity == .error }, "\(strict)")
        // What Ferry's own formats cannot hold stays an error either way.
        #expect(validator.problems(in: Record(recordType: "T", recordName: "_é")).contains { $0.severity == .error })
    }

    @Test(arguments: [("Car", false), ("CD_Post", false), ("my.type", true), ("1Car", true), ("_T", true), ("", true), ("Ünï", true)])
    func checksRecordTypes(type: String, invalid: Bool) {
        #expect(rules(Record(recordType: type, recordName: "a")).contains(.recordType) == invalid)
    }

    @Test(arguments: [
        ("CarZone", false), ("com.apple.coredata.cloudkit.zone", false), ("_defaultZone", false), ("ScorebookData", false),
        ("_mine", true), ("a/b", true), ("", true), ("sp ace", true),
    ])
    func checksZoneNames(zone: String, invalid: Bool) {
        #expect(rules(Record(recordType: "T", recordName: "a", zoneID: ZoneID(zoneName: zone))).contains(.zoneName) == invalid)
    }

    @Test func checksFieldNamesAndReservedNames() {
        let record = Record(
            recordType: "T", recordName: "a",
            fields: ["ok_1": .int64(1), "2bad": .int64(1), "recordID": .string("x"), "modificationDate": .timestamp(0)])
        let problems = validator.problems(in: record)
        #expect(problems.filter { $0.rule == .fieldName }.map(\.path) == ["fields.2bad"])
        #expect(Set(problems.filter { $0.rule == .reservedFieldName }.map(\.path)) == ["fields.recordID", "fields.modificationDate"])
    }

    @Test func refusesEveryReservedNameAndOnlyThose() {
        let near = ["recordid", "RecordID", "recordIDs", "etags", "creation", "name", "lastUpdate", "modified"]
        for name in RecordValidator.reservedFieldNames.sorted() + near {
            let rules = validator.problems(in: Record(recordType: "T", recordName: "a", fields: [name: .int64(1)])).map(\.rule)
            #expect(rules.contains(.reservedFieldName) == RecordValidator.reservedFieldNames.contains(name), "\(name)")
        }
    }

    @Test func limitsRecordSizeExcludingAssets() {
        let big = Record(recordType: "T", recordName: "a", fields: ["blob": .bytes(Data(count: 1_000_001))])
        #expect(rules(big) == [.recordSize])
        let asset = Asset(sha256: .zero, size: 50_000_000)
        let withAsset = Record(recordType: "T", recordName: "a", fields: ["file": .asset(asset), "blob": .bytes(Data(count: 900_000))])
        #expect(rules(withAsset).isEmpty)
    }

    @Test func refusesReferencesAcrossZonesAndBadValues() {
        let record = Record(
            recordType: "Note", recordName: "n", zoneID: ZoneID(zoneName: "CarZone"),
            fields: [
                "parent": .reference(Reference(recordName: "Car.1", zoneID: ZoneID(zoneName: "TruckZone"))),
                "nan": .double(.nan),
                "where": .location(Location(latitude: 91, longitude: 0)),
            ])
        #expect(Set(rules(record)) == [.reference, .fieldValue])
        #expect(validator.problems(in: record).count == 3)
    }

    @Test func warnsPastSevenHundredFiftyDeleteSelfReferencesToOneTarget() {
        var graph = InMemoryRecordGraph()
        let parent = TestRecords.vehicle("Car", index: 0)
        var warnings: [RecordProblem] = []
        for index in 0..<752 {
            let note = TestRecords.note(index, parent: parent)
            note.forEachDeleteSelfReference { _, reference in
                let key = RecordKey(reference.target)
                if graph.countDeleteSelfReference(to: key), let warning = validator.deleteSelfLimitWarning(in: note, target: key) {
                    warnings.append(warning)
                }
            }
        }
        #expect(warnings.count == 1)
        #expect(warnings.first?.severity == .warning)
        #expect(warnings.first?.rule == .deleteSelfLimit)
    }
}

@Suite struct RecordSchemaTests {
    @Test func reportsFieldsThatChangeType() {
        var schema = RecordSchema()
        schema.add(Record(recordType: "T", recordName: "a", fields: ["x": .int64(1), "l": .list(.emptyUnknown)]))
        let conflict = Record(recordType: "T", recordName: "b", fields: ["x": .string("1")])
        #expect(schema.conflicts(in: conflict).map(\.rule) == [.fieldType])
        let list = Record(recordType: "T", recordName: "c", fields: ["l": .list(FieldList(.string, [.string("s")]) ?? .emptyUnknown)])
        #expect(schema.conflicts(in: list).isEmpty)
        schema.add(list)
        #expect(schema.recordTypes["T"]?["l"] == .list(.string))
    }

    @Test func roundTripsThroughJSON() throws {
        var schema = RecordSchema()
        for record in TestRecords.fleet(vehicles: 1) + [TestRecords.everyType()] { schema.add(record) }
        schema.add(Deletion(recordType: "Gone", recordName: "g", zoneID: ZoneID(zoneName: "Z", ownerName: "_o")))
        #expect(try RecordSchema(json: schema.jsonValue) == schema)
    }
}

@Suite struct RecordTypeGraphTests {
    @Test func ordersParentsBeforeChildrenWhateverTheInputOrder() {
        var graph = InMemoryRecordGraph()
        let records = TestRecords.fleet(vehicles: 2).reversed()
        for record in records {
            let registered = graph.register(record.id, type: record.recordType)
            #expect(registered)
        }
        for record in records { graph.addReferences(from: record.recordType, to: record.fields.values.flatMap(\.references).map(\.target)) }
        let ordering = graph.ordering()
        #expect(ordering.order == ["Bus", "Car", "Truck", "Note"])
        #expect(ordering.cycles.isEmpty)
        #expect(ordering.danglingReferences == 0)
    }

    @Test func breaksCyclesDeterministicallyAndCountsDanglingReferences() {
        var graph = InMemoryRecordGraph()
        for (type, name) in [("A", "a"), ("B", "b"), ("C", "c")] { _ = graph.register(RecordID(recordName: name), type: type) }
        graph.addReferences(from: "A", to: [RecordID(recordName: "b")])
        graph.addReferences(from: "B", to: [RecordID(recordName: "a"), RecordID(recordName: "missing")])
        graph.addReferences(from: "C", to: [RecordID(recordName: "a"), RecordID(recordName: "c")])
        let ordering = graph.ordering()
        #expect(ordering.order == ["A", "B", "C"])
        #expect(ordering.cycles == [["A", "B"]])
        #expect(ordering.danglingReferences == 1)
    }

    @Test func detectsDuplicateIdentitiesPerZone() {
        var graph = InMemoryRecordGraph()
        let first = graph.register(RecordID(recordName: "x", zoneID: ZoneID(zoneName: "A")), type: "T")
        let otherZone = graph.register(RecordID(recordName: "x", zoneID: ZoneID(zoneName: "B")), type: "T")
        let duplicate = graph.register(RecordID(recordName: "x", zoneID: ZoneID(zoneName: "A")), type: "U")
        #expect(first && otherZone && !duplicate)
    }
}
