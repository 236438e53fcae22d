import FerryCore
import FerryJSON
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// Classes no fixture holds, built the way Foundation archives them.
@Suite struct KeyedArchiveBuilderTests {
    private func root(_ archive: KeyedArchiveBuilder, _ uid: Int) throws -> ArchivedObject? {
        let top = try #require(try PlistDocument(bytes: archive.binary(root: uid)).decodeArchive())
        guard case .object(let object) = top.first?.value else { return nil }
        return object
    }

    @Test(arguments: [
        ([0x39, 0x30] as [UInt8], Int64(-2), false, "123.45"),  // 12345 × 10^-2
        ([0x01, 0x00], 3, true, "-1000"),
        ([0x05, 0x00], -4, false, "0.0005"),
        ([0xFF, 0xFF, 0x01, 0x00], 0, false, "131071"),
    ])
    func readsDecimalNumbers(mantissa: [UInt8], exponent: Int64, negative: Bool, text: String) throws {
        var archive = KeyedArchiveBuilder()
        var bytes = mantissa
        bytes += [UInt8](repeating: 0, count: 16 - mantissa.count)
        let uid = archive.object(
            "NSDecimalNumber", chain: ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"],
            fields: [
                "NS.mantissa": .data(bytes), "NS.exponent": .integer(exponent), "NS.negative": .bool(negative),
                "NS.length": .integer(Int64(mantissa.count / 2)), "NS.compact": .bool(true), "NS.mantissa.bo": .integer(1),
            ])
        #expect(try root(archive, uid)?.content == .decimal(text))
    }

    @Test func readsLocations() throws {
        var archive = KeyedArchiveBuilder()
        let uid = archive.object(
            "CLLocation",
            fields: [
                "kCLLocationCodingKeyCoordinateLatitude": .real(52.52), "kCLLocationCodingKeyCoordinateLongitude": .real(13.405),
                "kCLLocationCodingKeyAltitude": .real(34), "kCLLocationCodingKeyHorizontalAccuracy": .real(5),
                "kCLLocationCodingKeyTimestamp": .real(700_000_000),
            ])
        #expect(
            try root(archive, uid)?.content
                == .location(
                    ArchivedLocation(
                        latitude: 52.52, longitude: 13.405, altitude: 34, horizontalAccuracy: 5, verticalAccuracy: nil, speed: nil,
                        course: nil, timestamp: 700_000_000)))
    }

    @Test func readsReferencesAndRecordIDs() throws {
        var archive = KeyedArchiveBuilder()
        let id = archive.recordID("Car.0E6F", zone: "CarZone")
        let reference = archive.object("CKReference", fields: ["recordID": .uid(id), "action": .integer(1)])
        let expected = ArchivedRecordID(recordName: "Car.0E6F", zoneID: ArchivedZoneID(zoneName: "CarZone"))
        #expect(try root(archive, reference)?.content == .reference(ArchivedReference(recordID: expected, action: 1)))
        // The fast path agrees with the general decoder, in binary and in XML.
        let bytes = archive.binary(root: id)
        #expect(try PlistDocument(bytes: bytes).archivedRecordID() == expected)
        let borrowed = try bytes.withUnsafeBytes { buffer in try BinaryPlist.withPlist(borrowing: buffer) { try $0.archivedRecordID() } }
        #expect(borrowed == expected)
        #expect(try root(archive, id)?.content == .recordID(expected))
    }

    @Test(arguments: ["__defaultOwner__", "_4ab84f2560e93224e4c1b40e97b24ae5", "__defaultOwner_", "__defaultOwner__x", "__DEFAULTOWNER__"])
    func fastPathKeepsTheOwner(owner: String) throws {
        var archive = KeyedArchiveBuilder()
        let id = archive.recordID("Note.1", zone: "BusZone", owner: owner)
        let expected = ArchivedRecordID(recordName: "Note.1", zoneID: ArchivedZoneID(zoneName: "BusZone", ownerName: owner))
        let bytes = archive.binary(root: id)
        let borrowed = try bytes.withUnsafeBytes { buffer in try BinaryPlist.withPlist(borrowing: buffer) { try $0.archivedRecordID() } }
        #expect(borrowed == expected)
        #expect(try PlistDocument(bytes: bytes).archivedRecordID() == expected)
    }

    @Test func theShapeReaderAnswersAsAFullReadForEveryArchive() throws {
        func archive(_ name: String, zone: String = "CarZone", owner: String = "__defaultOwner__") -> [UInt8] {
            var archive = KeyedArchiveBuilder()
            let id = archive.recordID(name, zone: zone, owner: owner)
            return archive.binary(root: id)
        }
        func full(_ bytes: [UInt8]) throws -> ArchivedRecordID {
            try bytes.withUnsafeBytes { buffer in try BinaryPlist.withPlist(borrowing: buffer) { try $0.archivedRecordID() } }
        }
        var reader = RecordIDArchiveReader()
        // Names of one length (read from the first one's shape), of another, in other zones, owners, back and forth;
        // a name outside ASCII (written as UTF-16, which is always read in full).
        let archives = [
            archive("Car.0001"), archive("Car.0002"), archive("Car.12345"), archive("Car.0003", zone: "BusZone"), archive("Car.0004"),
            archive("Car.0005", owner: "_4ab84f2560e93224e4c1b40e97b24ae5"), archive("Car.0006", owner: "_4ab84f2560e93224e4c1b40e97b24ae4"),
            archive("Caré.001"), archive("Caré.002"), archive("Car.0007", zone: "BusZone"),
        ]
        for bytes in archives {
            let expected = try full(bytes)
            #expect(try bytes.withUnsafeBytes { try reader.recordID($0) } == expected)
        }
        // A byte of the name that an ASCII string may not hold is refused as a full read refuses it, shape or not.
        var hostile = archive("Car.0008")
        let at = try #require(hostile.indices.first { hostile[$0...].starts(with: Array("Car.0008".utf8)) })
        hostile[at + 5] = 0xC3
        #expect(throws: PlistError.self) { try full(hostile) }
        #expect(throws: PlistError.self) { try hostile.withUnsafeBytes { try reader.recordID($0) } }
        // Any other byte changed makes it another shape: read in full.
        var other = archive("Car.0009")
        other[other.count - 40] ^= 0x01
        let answer = Result { try full(other) }
        let shaped = Result { try other.withUnsafeBytes { try reader.recordID($0) } }
        #expect((try? answer.get()) == (try? shaped.get()))
    }

    @Test func fastPathRefusesWhatIsNotARecordID() throws {
        var archive = KeyedArchiveBuilder()
        let string = archive.add(.string("just text"))
        #expect(throws: PlistError.self) { try PlistDocument(bytes: archive.binary(root: string)).archivedRecordID() }
        let array = archive.object("NSArray", fields: ["NS.objects": .array([])])
        #expect(throws: PlistError.self) { try PlistDocument(bytes: archive.binary(root: array)).archivedRecordID() }
    }

    @Test func decodesUnknownClassesAsFieldsAndSharesObjects() throws {
        var archive = KeyedArchiveBuilder()
        let name = archive.add(.string("Beetle"))
        let tag = archive.object("MyApp.Tag", fields: ["label": .string("red")])
        let car = archive.object(
            "MyApp.Car", chain: ["MyApp.Car", "MyApp.Vehicle", "NSObject"],
            fields: [
                "name": .uid(name), "primary": .uid(tag), "secondary": .uid(tag), "doors": .integer(2),
            ])
        let object = try #require(try root(archive, car))
        #expect(object.archivedClass.unqualifiedName == "Car")
        guard case .fields(let fields) = object.content else { Issue.record("\(object.content)"); return }
        #expect(fields.map(\.name) == ["name", "primary", "secondary", "doors"])
        #expect(fields[1].value == fields[2].value)
        let json = ArchivedValue.object(object).jsonValue
        #expect(json.objectValue?["primary"]?.objectValue?["$id"] == .integer(Int64(tag)))
        #expect(json.objectValue?["secondary"] == ["$ref": .integer(Int64(tag))])
    }

    @Test func readsCoreDataKnownKeysDictionaries() throws {
        // The layout of NSEntities in a store's Z_MODELCACHE.
        var archive = KeyedArchiveBuilder()
        let keys = archive.object(
            "NSArray", fields: ["NS.objects": .array([.uid(archive.add(.string("Car"))), .uid(archive.add(.string("Person")))])])
        let values = archive.object("NSArray", fields: ["NS.objects": .array([.integer(1), .integer(2)])])
        let mapping = archive.object("NSKnownKeysMappingStrategy1", fields: ["keys": .uid(keys), "length": .integer(2), "version": .integer(1)])
        let dictionary = archive.object(
            "NSKnownKeysDictionary1", chain: ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"],
            fields: ["values": .uid(values), "searchMapping": .uid(mapping), "version": .integer(1)])
        #expect(
            try root(archive, dictionary)?.content
                == .dictionary([
                    ArchivedEntry(key: .string("Car"), value: .integer(1)), ArchivedEntry(key: .string("Person"), value: .integer(2)),
                ]))
    }
}
