import FerryCore
import FerryRecords
import Foundation
import Testing

@Suite struct FieldValueContentsTests {
    static let zone = ZoneID(zoneName: "CarZone")
    static let car = Reference(recordName: "Car.1", zoneID: zone, action: .deleteSelf)
    static let truck = Reference(recordName: "Truck.2", zoneID: zone, action: .validate)

    @Test(arguments: [
        FieldValue.reference(car), .string("Car.1"), .int64(3),
        FieldList(.reference, [.reference(car), .reference(truck)]).map(FieldValue.list) ?? .int64(0),
        FieldList(.string, [.string("a")]).map(FieldValue.list) ?? .int64(0),
    ])
    func forEachReferenceVisitsWhatReferencesLists(value: FieldValue) {
        var visited: [Reference] = []
        value.forEachReference { visited.append($0) }
        #expect(visited == value.references)
    }

    @Test func deleteSelfReferencesComeFromScalarsAndLists() {
        let record = Record(
            recordType: "Note", recordName: "Note.1", zoneID: Self.zone,
            fields: [
                "car": .reference(Self.car), "text": .string("x"),
                "more": FieldList(.reference, [.reference(Self.truck), .reference(Self.car)]).map(FieldValue.list) ?? .int64(0),
            ])
        var found: [String] = []
        record.forEachDeleteSelfReference { field, reference in found.append("\(field):\(reference.recordName)") }
        #expect(found.sorted() == ["car:Car.1", "more:Car.1"])
    }

    @Test func forEachAssetVisitsAssetFieldsAndListsInNameOrder() {
        func asset(_ byte: UInt8) -> Asset { Asset(sha256: SHA256Hasher.digest([byte]), size: Int64(byte)) }
        let fields: RecordFields = [
            "photo": .asset(asset(1)), "name": .string("x"), "car": .reference(Self.car),
            "album": FieldList(.asset, [.asset(asset(2)), .asset(asset(3))]).map(FieldValue.list) ?? .int64(0),
            "tags": FieldList(.string, [.string("a")]).map(FieldValue.list) ?? .int64(0),
        ]
        var found: [String] = []
        fields.forEachAsset { field, asset in found.append("\(field):\(asset.size)") }
        #expect(found == ["album:2", "album:3", "photo:1"])
        #expect(found.count == fields.values.flatMap(\.assets).count)
    }
}
