import FerryCore
import Foundation

/// The seed-shaped stores in `Samples/` (`../shared/docs/seeds.md` §1 and §2), written by ``CoreDataStoreBuilder``.
///
/// `Samples/` holds their output; a test rebuilds them and compares, and `FERRY_UPDATE_SAMPLES=1` rewrites them.
public enum SampleStores {
    /// Seconds since 2001 of a Unix time in milliseconds.
    static func date(ms: Int64) -> StoreValue { .date(Double(ms) / 1000 - 978_307_200) }

    /// A `Transformable` value holding an archived `CKRecordID`.
    public static func archivedRecordID(_ recordName: String, zone: String) -> StoreValue {
        var archive = KeyedArchiveBuilder()
        let root = archive.recordID(recordName, zone: zone)
        return .blob(archive.binary(root: root))
    }

    // MARK: Cars Trucks Buses (seeds §1)

    static let vehicleAttributes = [
        AttributeSpec("name", "String"), AttributeSpec("added", "Date"), AttributeSpec("lastUpdate", "Date"),
        AttributeSpec("recordName", "String"), AttributeSpec("recordID", "Transformable", transformer: "NSSecureUnarchiveFromData"),
        AttributeSpec("photo", "Binary", allowsExternalStorage: true),
    ]

    /// The model of the "Cars Trucks Buses" app: per-type roots with their notes, and tombstones.
    public static let carsTrucksBusesModel: [EntitySpec] =
        ["Bus", "Car", "Truck"].map { type in
            EntitySpec(
                type, attributes: vehicleAttributes,
                relationships: [RelationshipSpec("notes", to: "Note", inverse: type.lowercased(), toMany: true, deleteRule: "Cascade")])
        } + [
            EntitySpec(
                "Note",
                attributes: [
                    AttributeSpec("text", "String"), AttributeSpec("added", "Date"), AttributeSpec("lastUpdate", "Date"),
                    AttributeSpec("recordName", "String"), AttributeSpec("recordID", "Transformable", transformer: "NSSecureUnarchiveFromData"),
                ],
                relationships: ["Bus", "Car", "Truck"].map { RelationshipSpec($0.lowercased(), to: $0, inverse: "notes") }),
            EntitySpec(
                "DeletedCloudKitObject",
                attributes: [
                    AttributeSpec("recordType", "String"), AttributeSpec("recordID", "Transformable", transformer: "NSSecureUnarchiveFromData"),
                ]),
        ]

    /// The store behind `Samples/cars-trucks-buses/records.ndjson`: the same identities, values and photos.
    /// - Parameter photos: the folder with `beetle.png` and `school-bus.png`.
    public static func carsTrucksBuses(photos: String) throws -> CoreDataStoreBuilder {
        let builder = CoreDataStoreBuilder(entities: carsTrucksBusesModel, storeUUID: "C7A1B2C3-D4E5-4F60-8172-93A4B5C6D7E8", frameworkVersion: 977)
        let beetle = try InputFile.contents(of: "\(photos)/beetle.png")
        let schoolBus = try InputFile.contents(of: "\(photos)/school-bus.png")
        let zones = ["Car": "CarZone", "Truck": "TruckZone", "Bus": "BusZone"]
        let vehicles: [(type: String, id: Int, name: String, addedMs: Int64, photo: StoreValue?)] = [
            ("Car", 1, "Beetle", 1_479_340_800_000, .external(beetle, uuid: UUID(uuidString: "B3E7C0DE-0000-4000-8000-00000000BEE7") ?? UUID())),
            ("Car", 2, "Mini", 1_479_427_200_000, nil), ("Car", 3, "2CV", 1_479_513_600_000, nil),
            ("Truck", 4, "Unimog", 1_479_600_000_000, nil), ("Truck", 5, "Actros", 1_479_686_400_000, nil),
            ("Bus", 6, "School bus", 1_479_772_800_000, .inlineMarked(schoolBus)), ("Bus", 7, "Routemaster", 1_479_859_200_000, nil),
        ]
        var byID: [Int: (type: String, object: StoreObject)] = [:]
        for vehicle in vehicles {
            let recordName = "\(vehicle.type).0E6F2A40-0000-0000-0000-\(String(format: "%012d", vehicle.id))"
            var values: [String: StoreValue] = [
                "name": .text(vehicle.name), "added": date(ms: vehicle.addedMs), "lastUpdate": date(ms: vehicle.addedMs + 3_600_000),
                "recordName": .text(recordName), "recordID": archivedRecordID(recordName, zone: zones[vehicle.type] ?? ""),
            ]
            if let photo = vehicle.photo { values["photo"] = photo }
            byID[vehicle.id] = (vehicle.type, builder.insert(vehicle.type, values, version: 2))
        }
        let notes: [(id: Int, parent: Int, text: String, addedMs: Int64)] = [
            (64, 1, "Oil change due in March", 1_479_840_800_000), (65, 1, "New tyres fitted", 1_479_840_860_000),
            (66, 2, "Scratch on the left door", 1_479_840_920_000), (67, 4, "Winch serviced", 1_479_840_980_000),
            (68, 6, "Seats 48; wheelchair lift OK", 1_479_841_040_000), (69, 7, "Heritage plates: ünïcødé ✓", 1_479_841_100_000),
        ]
        for note in notes {
            guard let parent = byID[note.parent] else { continue }
            let recordName = "Note.0E6F2A40-0000-0000-0000-\(String(format: "%012d", note.id))"
            let object = builder.insert(
                "Note",
                [
                    "text": .text(note.text), "added": date(ms: note.addedMs), "lastUpdate": date(ms: note.addedMs),
                    "recordName": .text(recordName), "recordID": archivedRecordID(recordName, zone: zones[parent.type] ?? ""),
                ])
            builder.relate(object, parent.type.lowercased(), parent.object)
        }
        builder.insert(
            "DeletedCloudKitObject",
            ["recordType": .text("Car"), "recordID": archivedRecordID("Car.0E6F2A40-0000-0000-0000-000000000063", zone: "CarZone")])
        return builder
    }

    // MARK: Scorebook (seeds §2)

    static func scorebookAttributes(_ extra: [AttributeSpec]) -> [AttributeSpec] {
        extra + [AttributeSpec("ckRecordName", "String"), AttributeSpec("modificationDate", "Date")]
    }

    /// The Scorebook model: `ckRecordName` and `modificationDate` on every entity.
    public static let scorebookModel: [EntitySpec] = [
        EntitySpec(
            "SBGame", attributes: scorebookAttributes([AttributeSpec("name", "String")]),
            relationships: [RelationshipSpec("matches", to: "SBMatch", inverse: "game", toMany: true, deleteRule: "Cascade")]),
        EntitySpec(
            "SBPerson", attributes: scorebookAttributes([AttributeSpec("firstName", "String"), AttributeSpec("lastName", "String")]),
            relationships: [RelationshipSpec("players", to: "SBPlayer", inverse: "person", toMany: true, deleteRule: "Cascade")]),
        EntitySpec(
            "SBMatch", attributes: scorebookAttributes([AttributeSpec("date", "Date"), AttributeSpec("finished", "Boolean")]),
            relationships: [
                RelationshipSpec("game", to: "SBGame", inverse: "matches"),
                RelationshipSpec("players", to: "SBPlayer", inverse: "match", toMany: true, ordered: true, deleteRule: "Cascade"),
                RelationshipSpec("images", to: "SBMatchImage", inverse: "match", toMany: true, deleteRule: "Cascade"),
                RelationshipSpec("location", to: "SBMatchLocation", inverse: "match", deleteRule: "Cascade"),
            ]),
        EntitySpec(
            "SBPlayer", attributes: scorebookAttributes([AttributeSpec("position", "Integer 16")]),
            relationships: [
                RelationshipSpec("person", to: "SBPerson", inverse: "players"), RelationshipSpec("match", to: "SBMatch", inverse: "players"),
                RelationshipSpec("scores", to: "SBScore", inverse: "player", toMany: true, deleteRule: "Cascade"),
            ]),
        EntitySpec(
            "SBScore", attributes: scorebookAttributes([AttributeSpec("round", "Integer 16"), AttributeSpec("value", "Integer 32")]),
            relationships: [RelationshipSpec("player", to: "SBPlayer", inverse: "scores")]),
        EntitySpec(
            "SBMatchImage", attributes: scorebookAttributes([AttributeSpec("image", "Binary", allowsExternalStorage: true)]),
            relationships: [RelationshipSpec("match", to: "SBMatch", inverse: "images")]),
        EntitySpec(
            "SBMatchLocation", attributes: scorebookAttributes([AttributeSpec("latitude", "Double"), AttributeSpec("longitude", "Double")]),
            relationships: [RelationshipSpec("match", to: "SBMatch", inverse: "location")]),
    ]

    /// A Scorebook store: one game, two people, a finished match with scores, a photo and a location.
    /// - Parameter photos: the folder with `beetle.png` (used as the match photo).
    public static func scorebook(photos: String) throws -> CoreDataStoreBuilder {
        let builder = CoreDataStoreBuilder(entities: scorebookModel, storeUUID: "5C0EB000-0000-4000-8000-000000000015")
        var serial = 0
        func values(_ entity: String, _ extra: [String: StoreValue], modified: Int64) -> [String: StoreValue] {
            serial += 1
            var result = extra
            result["ckRecordName"] = .text("\(entity)|~|A1B2C3D4-0000-4000-8000-\(String(format: "%012d", serial))")
            result["modificationDate"] = date(ms: modified)
            return result
        }
        let base: Int64 = 1_433_116_800_000  // 2015-06-01
        let game = builder.insert("SBGame", values("SBGame", ["name": .text("Rummy")], modified: base))
        let people = [("Ada", "Lovelace"), ("Alan", "Turing")].map { first, last in
            builder.insert("SBPerson", values("SBPerson", ["firstName": .text(first), "lastName": .text(last)], modified: base))
        }
        let match = builder.insert(
            "SBMatch", values("SBMatch", ["date": date(ms: base + 86_400_000), "finished": .bool(true)], modified: base + 90_000_000))
        builder.relate(match, "game", game)
        var players: [StoreObject] = []
        for (index, person) in people.enumerated() {
            let player = builder.insert("SBPlayer", values("SBPlayer", ["position": .integer(Int64(index + 1))], modified: base + 90_000_000))
            builder.relate(player, "person", person)
            players.append(player)
            for round in 1...2 {
                let score = builder.insert(
                    "SBScore", values("SBScore", ["round": .integer(Int64(round)), "value": .integer(Int64(10 * round + index))], modified: base))
                builder.relate(score, "player", player)
            }
        }
        builder.relate(match, "players", players.reversed())  // ordered: Alan first
        let photo = try InputFile.contents(of: "\(photos)/beetle.png")
        let image = builder.insert(
            "SBMatchImage",
            values(
                "SBMatchImage", ["image": .external(photo, uuid: UUID(uuidString: "5C0EB000-1111-4000-8000-000000000001") ?? UUID())], modified: base)
        )
        builder.relate(image, "match", match)
        let location = builder.insert(
            "SBMatchLocation", values("SBMatchLocation", ["latitude": .real(51.5007), "longitude": .real(-0.1246)], modified: base))
        builder.relate(location, "match", match)
        return builder
    }

    /// Writes both samples under a `Samples/` folder.
    public static func write(to samples: String) throws {
        let photos = "\(samples)/cars-trucks-buses/assets/photos"
        try carsTrucksBuses(photos: photos).write(
            to: "\(samples)/cars-trucks-buses/store", storeName: "CarsTrucksBuses.sqlite", modelName: "CarsTrucksBuses")
        try scorebook(photos: photos).write(to: "\(samples)/scorebook/store", storeName: "Scorebook.sqlite", modelName: "Scorebook")
    }
}
