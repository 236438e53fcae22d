import FerryCore
import FerryPlist
import FerryTesting
import Foundation

/// A store with every attribute type and every relationship kind of formats.md §1.5–1.6, written by the builder:
/// inheritance with an abstract root and sibling column collisions, a polymorphic to-one, one-to-one on both sides,
/// ordered one-to-many, ordered many-to-many, reflexive many-to-many (self-inverse and paired), a to-many without
/// inverse, a renamed entity, external and inline binary data, archived and custom transformables.
enum GarageStore {
    static let entities: [EntitySpec] = [
        EntitySpec(
            "Vehicle", isAbstract: true,
            attributes: [
                AttributeSpec("name", "String"), AttributeSpec("added", "Date"), AttributeSpec("doors", "Integer 16"),
                AttributeSpec("mileage", "Integer 32"), AttributeSpec("checksum", "Integer 64"), AttributeSpec("price", "Decimal"),
                AttributeSpec("weight", "Double"), AttributeSpec("rating", "Float"), AttributeSpec("electric", "Boolean"),
                AttributeSpec("serial", "UUID"), AttributeSpec("manual", "URI"), AttributeSpec("photo", "Binary", allowsExternalStorage: true),
                AttributeSpec("specs", "Transformable", transformer: "NSSecureUnarchiveFromData"),
                AttributeSpec("sketch", "Transformable", transformer: "SketchTransformer"),
            ],
            relationships: [
                RelationshipSpec("owner", to: "Person", inverse: "vehicles"),
                RelationshipSpec("parts", to: "Part", inverse: "vehicle", toMany: true, ordered: true, deleteRule: "Cascade"),
            ]),
        EntitySpec("Car", parent: "Vehicle", attributes: [AttributeSpec("color", "String")]),
        EntitySpec("Truck", parent: "Vehicle", attributes: [AttributeSpec("color", "Integer 16"), AttributeSpec("payload", "Double")]),
        EntitySpec(
            "Person",
            attributes: [
                AttributeSpec("name", "String"), AttributeSpec("nameLength", "Integer 32", derivation: "name.length"),
                AttributeSpec("embedding", "Vector"),
            ],
            relationships: [
                RelationshipSpec("vehicles", to: "Vehicle", inverse: "owner", toMany: true),
                RelationshipSpec("passport", to: "Passport", inverse: "holder"),
                RelationshipSpec("friends", to: "Person", inverse: "friends", toMany: true),
                RelationshipSpec("following", to: "Person", inverse: "followers", toMany: true),
                RelationshipSpec("followers", to: "Person", inverse: "following", toMany: true),
                RelationshipSpec("garages", to: "Garage", inverse: "members", toMany: true, ordered: true),
            ]),
        EntitySpec(
            "Passport", attributes: [AttributeSpec("number", "String")],
            relationships: [RelationshipSpec("holder", to: "Person", inverse: "passport")]),
        EntitySpec(
            "Part", attributes: [AttributeSpec("name", "String")],
            relationships: [RelationshipSpec("vehicle", to: "Vehicle", inverse: "parts")]),
        EntitySpec(
            "Garage", attributes: [AttributeSpec("name", "String")],
            relationships: [
                RelationshipSpec("members", to: "Person", inverse: "garages", toMany: true, ordered: true),
                RelationshipSpec("visitors", to: "Person", inverse: nil, toMany: true),
            ]),
        EntitySpec("Workshop", renamingIdentifier: "Shed", attributes: [AttributeSpec("city", "String")]),
    ]

    /// The objects the tests look for.
    struct Handles {
        var beetle: StoreObject
        var unimog: StoreObject
        var ada: StoreObject
        var bob: StoreObject
        var cy: StoreObject
        var parts: [StoreObject]
        var garage: StoreObject
        var photo: [UInt8]
        var missingPhoto: UUID
    }

    static let specsArchive: [UInt8] = {
        var archive = KeyedArchiveBuilder()
        let root = archive.object("NSDictionary", fields: ["NS.keys": .array([]), "NS.objects": .array([])])
        return archive.binary(root: root)
    }()

    /// Builds the store.
    static func build() -> (CoreDataStoreBuilder, Handles) {
        let builder = CoreDataStoreBuilder(entities: entities, storeUUID: "9F1C7A52-3B0E-4C11-8E2D-5A6B7C8D9E0F")
        let photo = (0..<300).map { UInt8($0 % 251) }
        let missing = UUID(uuidString: "00000000-0000-4000-8000-0000000000AA") ?? UUID()
        let beetle = builder.insert(
            "Car",
            [
                "name": .text("Beetle"), "added": .date(500_000_000.25), "doors": .integer(2), "mileage": .integer(120_000),
                "checksum": .integer(Int64.max), "price": .real(10.11), "weight": .real(800.5), "rating": .real(4.5), "electric": .bool(false),
                "serial": .uuid(UUID(uuidString: "0E6F2A40-1111-4222-8333-444455556666") ?? UUID()),
                "manual": .text("https://example.com/beetle.pdf"),
                "photo": .external(photo, uuid: UUID(uuidString: "5B2C1D3E-0000-4000-8000-000000000001") ?? UUID()),
                "specs": .blob(specsArchive), "sketch": .blob([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]), "color": .text("yellow"),
            ])
        let unimog = builder.insert(
            "Truck",
            [
                "name": .text("Unimog"), "added": .integer(500_000_000), "electric": .bool(true), "color": .integer(3), "payload": .real(2.5),
                "photo": .inlineMarked([1, 2, 3]),
            ])
        let zoe = builder.insert(
            "Car", ["name": .text("Zoe"), "photo": .external([9, 9], uuid: missing, writeFile: false), "mileage": .text("lots")])
        let ada = builder.insert("Person", ["name": .text("Ada"), "nameLength": .integer(3), "embedding": .blob([0, 0, 128, 63])])
        let bob = builder.insert("Person", ["name": .text("Bob")])
        let cy = builder.insert("Person", ["name": .text("Cy")])
        let passport = builder.insert("Passport", ["number": .text("X123")])
        let parts = ["wheel", "door", "seat"].map { builder.insert("Part", ["name": .text($0)]) }
        let garage = builder.insert("Garage", ["name": .text("Central")])
        builder.insert("Workshop", ["city": .text("Leeds")])
        let stray = builder.insert("Part", ["name": .text("stray")])

        builder.relate(ada, "vehicles", [beetle, unimog])
        builder.relate(bob, "vehicles", [zoe])
        builder.relate(ada, "passport", passport)
        builder.relate(beetle, "parts", [parts[2], parts[0], parts[1]])  // ordered, not by key
        builder.relate(ada, "friends", [bob, cy])
        builder.relate(bob, "following", [ada])
        builder.relate(cy, "following", [ada, bob])
        builder.relate(garage, "members", [cy, ada])  // ordered, not by key
        builder.relate(garage, "visitors", [bob])
        builder.relate(stray, "vehicle", StoreObject(entity: "Truck", primaryKey: 99))  // dangling
        return (
            builder,
            Handles(beetle: beetle, unimog: unimog, ada: ada, bob: bob, cy: cy, parts: parts, garage: garage, photo: photo, missingPhoto: missing)
        )
    }
}
