import FerryCore
import FerryTesting
import Foundation

/// A small store shaped for the mapper: a root with cascading children, an ordered one-to-many, a many-to-many,
/// archived record IDs, a decimal, a UUID, an externally stored cover, a color as text, a property with a reserved
/// CloudKit field name, and a tombstone entity.
enum LibraryStore {
    static let storeUUID = "2B1E4C5D-6F70-4812-9A3B-4C5D6E7F8091"

    static let entities: [EntitySpec] = [
        EntitySpec(
            "Shelf", attributes: [AttributeSpec("label", "String")],
            relationships: [RelationshipSpec("books", to: "Book", inverse: "shelf", toMany: true, deleteRule: "Cascade")]),
        EntitySpec(
            "Book",
            attributes: [
                AttributeSpec("title", "String"), AttributeSpec("price", "Decimal"), AttributeSpec("isbn", "UUID"),
                AttributeSpec("published", "Date"), AttributeSpec("cover", "Binary", allowsExternalStorage: true),
                AttributeSpec("color", "String"), AttributeSpec("modificationDate", "Date"),
                AttributeSpec("recordID", "Transformable", transformer: "NSSecureUnarchiveFromData"),
            ],
            relationships: [
                RelationshipSpec("shelf", to: "Shelf", inverse: "books"),
                RelationshipSpec("chapters", to: "Chapter", inverse: "book", toMany: true, ordered: true, deleteRule: "Cascade"),
                RelationshipSpec("tags", to: "Tag", inverse: "books", toMany: true),
            ]),
        EntitySpec("Ebook", parent: "Book", attributes: [AttributeSpec("format", "String")]),
        EntitySpec(
            "Chapter", attributes: [AttributeSpec("title", "String")],
            relationships: [RelationshipSpec("book", to: "Book", inverse: "chapters")]),
        EntitySpec(
            "Tag", attributes: [AttributeSpec("name", "String")],
            relationships: [RelationshipSpec("books", to: "Book", inverse: "tags", toMany: true)]),
        EntitySpec(
            "DeletedCloudKitObject",
            attributes: [AttributeSpec("recordType", "String"), AttributeSpec("recordID", "Transformable", transformer: "NSSecureUnarchiveFromData")]),
    ]

    static let cover = (0..<1000).map { UInt8($0 % 253) }
    static let duneName = "Book.11111111-2222-4333-8444-555555555555"

    /// The record names of a store NSPersistentCloudKitContainer mirrored (with `mirrored: true`).
    static let mirroredShelf = "9B2E3F40-5A6B-4C7D-8E9F-0A1B2C3D4E5F"
    static let mirroredDune = "1C2D3E4F-5A6B-4C7D-8E9F-A0B1C2D3E4F5"

    /// Writes the store into `directory` and returns its path; `mirrored` adds NSPersistentCloudKitContainer's
    /// record metadata for the shelf and Dune.
    static func write(to directory: String, mirrored: Bool = false) throws -> String {
        let builder = CoreDataStoreBuilder(entities: entities, storeUUID: storeUUID)
        let shelf = builder.insert("Shelf", ["label": .text("Sci-fi")])
        let dune = builder.insert(
            "Book",
            [
                "title": .text("Dune"), "price": .real(9.99), "isbn": .uuid(UUID(uuidString: "0D0E0F10-1112-4314-8516-171819202122") ?? UUID()),
                "published": .date(0.5), "cover": .external(cover, uuid: UUID(uuidString: "C0000000-0000-4000-8000-000000000001") ?? UUID()),
                "color": .text("0.1, 0.2, 0.3, 1"), "modificationDate": .date(100),
                "recordID": SampleStores.archivedRecordID(duneName, zone: "ShelfZone"),
            ])
        let solaris = builder.insert("Book", ["title": .text("Solaris")])
        let ebook = builder.insert("Ebook", ["title": .text("Neuromancer"), "format": .text("epub")])
        let chapters = ["Prologue", "Arrakis", "Desert"].map { builder.insert("Chapter", ["title": .text($0)]) }
        let tags = ["classic", "desert"].map { builder.insert("Tag", ["name": .text($0)]) }
        builder.relate(shelf, "books", [dune, solaris, ebook])
        if mirrored {
            builder.mirror(shelf, recordName: mirroredShelf)
            builder.mirror(dune, recordName: mirroredDune)
        }
        builder.relate(dune, "chapters", [chapters[2], chapters[0], chapters[1]])  // ordered, not by key
        builder.relate(dune, "tags", tags)
        builder.relate(solaris, "tags", [tags[0]])
        builder.insert(
            "DeletedCloudKitObject",
            ["recordType": .text("Book"), "recordID": SampleStores.archivedRecordID("Book.99999999-0000-4000-8000-000000000000", zone: "ShelfZone")])
        return try builder.write(to: directory, storeName: "Library.sqlite")
    }
}
