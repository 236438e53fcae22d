import FerryCore
import FerryCoreData
import FerryMapping
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The mapper on a store written for it: names, zones, references, order, conversions, assets and tombstones.
@Suite struct StoreRecordMapperTests {
    /// A written library store and what mapping it produced.
    private struct Mapped {
        let scratch: Scratch
        let changes: [StoreRecordMapper.Mapped]

        func records(_ type: String) -> [Record] {
            changes.compactMap { if case .record(let record) = $0.change, record.recordType == type { record } else { nil } }
        }

        func record(_ type: String, _ field: String, _ value: String) throws -> Record {
            try #require(records(type).first { $0.fields[field] == .string(value) }, "no \(type) with \(field) = \(value)")
        }
    }

    private func map(mirrored: Bool = false, _ makePlan: (StoreSchema) throws -> MappingPlan) throws -> Mapped {
        let scratch = try Scratch()
        let path = try LibraryStore.write(to: scratch.file("library"), mirrored: mirrored)
        let store = try CoreDataStore(path: path)
        let mapper = try StoreRecordMapper(store: store, plan: try makePlan(store.schema), assets: try StoreAssets(temporaryDirectory: scratch.path))
        var changes: [StoreRecordMapper.Mapped] = []
        try mapper.run { changes.append($0) }
        return Mapped(scratch: scratch, changes: changes)
    }

    @Test func typePrefixedPresetPutsChildrenInTheirRootsZone() throws {
        let mapped = try map { try MappingPlan.preset("type-prefixed", for: $0) }
        let shelf = try #require(mapped.records("Shelf").first)
        #expect(shelf.zoneID.zoneName == "ShelfZone")
        let dune = try mapped.record("Book", "title", "Dune")
        #expect(dune.recordName == LibraryStore.duneName, "the archived CKRecordID's name is kept")
        #expect(dune.zoneID.zoneName == "ShelfZone")
        #expect(dune.fields["recordID"] == nil, "the identity attribute is not written as a field")
        #expect(dune.fields["shelf"] == .reference(Reference(recordName: shelf.recordName, zoneID: shelf.zoneID, action: .deleteSelf)))
        for chapter in mapped.records("Chapter") {
            #expect(chapter.zoneID.zoneName == "ShelfZone", "a grandchild follows its parent, which follows the root")
            #expect(chapter.fields["book"] == .reference(Reference(recordName: dune.recordName, zoneID: dune.zoneID, action: .deleteSelf)))
        }
        #expect(mapped.records("Tag").allSatisfy { $0.zoneID.zoneName == "TagZone" })
        // Book ↔ Tag cross zones: the list side keeps the tags' record names as a STRING_LIST, reported once.
        let tagNames = mapped.records("Tag").map(\.recordName).sorted()
        guard case .list(let tags)? = dune.fields["tags"] else {
            Issue.record("Dune's tags should be kept as record names")
            return
        }
        #expect(tags.elementType == .string && tags.elements.compactMap { if case .string(let name) = $0 { name } else { nil } }.sorted() == tagNames)
        #expect(mapped.changes.filter { $0.problems.contains { $0.contains("cannot cross zones") } }.count == 1)
        // Parents before children, deletions last.
        let types = mapped.changes.map(\.change.recordType)
        #expect(types == ["Shelf", "Book", "Book", "Ebook", "Chapter", "Chapter", "Chapter", "Tag", "Tag", "Book"])
        #expect(mapped.records("Ebook").first?.zoneID.zoneName == "ShelfZone", "a sub-entity follows its inherited parent relationship")
        guard case .deletion(let deletion)? = mapped.changes.last?.change else {
            Issue.record("the tombstone should come last as a deletion")
            return
        }
        #expect(deletion.recordName == "Book.99999999-0000-4000-8000-000000000000")
        #expect(deletion.zoneID.zoneName == "ShelfZone")
    }

    @Test func referencesFindTargetsWhateverTheirPrimaryKeys() throws {
        // Z_PK values far apart (a store edited by hand, or by another tool) take the identity index's sparse path.
        let scratch = try Scratch()
        let builder = CoreDataStoreBuilder(entities: LibraryStore.entities, storeUUID: LibraryStore.storeUUID)
        let keys: [Int64] = [7, 5_000_000_000, 3, 1 << 40]
        let shelves = keys.map { key in
            builder.insert("Shelf", ["label": .text("shelf \(key)")], primaryKey: key)
        }
        var books: [StoreObject] = []
        for (index, shelf) in shelves.enumerated() {
            let book = builder.insert("Book", ["title": .text("book \(index)")], primaryKey: Int64(index) * 1_000_003 + 1)
            builder.relate(shelf, "books", [book])
            books.append(book)
        }
        let path = try builder.write(to: scratch.file("sparse"), storeName: "Sparse.sqlite")
        let store = try CoreDataStore(path: path)
        let mapper = try StoreRecordMapper(
            store: store, plan: try MappingPlan.preset("type-prefixed", for: store.schema), assets: try StoreAssets(temporaryDirectory: scratch.path))
        var records: [Record] = []
        try mapper.run { mapped in
            #expect(mapped.problems.isEmpty, "\(mapped.entity) p\(mapped.primaryKey): \(mapped.problems)")
            if case .record(let record) = mapped.change { records.append(record) }
        }
        let shelfRecords = Dictionary(uniqueKeysWithValues: records.filter { $0.recordType == "Shelf" }.map { ($0.fields["label"], $0) })
        for index in shelves.indices {
            let book = try #require(records.first { $0.fields["title"] == .string("book \(index)") })
            let shelf = try #require(shelfRecords[.string("shelf \(shelves[index].primaryKey)")])
            #expect(book.fields["shelf"] == .reference(Reference(recordName: shelf.recordName, zoneID: shelf.zoneID, action: .deleteSelf)))
            #expect(book.zoneID == shelf.zoneID)
        }
    }

    @Test func twoPropertiesWrittenAsOneFieldKeepTheFirstAndAreReported() throws {
        // `price` and `published` (which comes after it, in the model and by name) renamed onto `added`, a name that
        // sorts before both; `shelf` (a relationship) renamed onto `color`: the first property written under a name
        // wins (attributes before relationships), whatever the names' canonical order.
        let mapped = try map { schema in
            var plan = try MappingPlan.preset("plain", for: schema)
            plan.entities["Book"] = EntityPlan(fields: [
                "price": FieldPlan(rename: "added"), "published": FieldPlan(rename: "added"), "shelf": FieldPlan(rename: "color"),
            ])
            return plan
        }
        let dune = try #require(mapped.records("Book").first { $0.fields["title"] == .string("Dune") })
        #expect(dune.fields["added"] == .double(9.99))
        #expect(dune.fields["color"] == .string("0.1, 0.2, 0.3, 1"), "the attribute comes before the relationship")
        #expect(dune.fields.names == dune.fields.names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        let problems = mapped.changes.first { $0.change.recordName == dune.recordName }?.problems ?? []
        #expect(problems.contains { $0.contains("two properties are both written as field added") })
    }

    @Test func attributesBecomeCloudKitFieldTypes() throws {
        let mapped = try map { try MappingPlan.preset("type-prefixed", for: $0) }
        let dune = try mapped.record("Book", "title", "Dune")
        #expect(dune.fields["price"] == .double(9.99))
        #expect(dune.fields["isbn"] == .string("0D0E0F10-1112-4314-8516-171819202122"))
        #expect(dune.fields["published"] == .timestamp(978_307_200_500))
        #expect(dune.fields["modificationDate"] == nil, "a reserved CloudKit field name is renamed")
        #expect(dune.fields["modificationDateValue"] == .timestamp(978_307_300_000))
        #expect(dune.fields["color"] == .string("0.1, 0.2, 0.3, 1"))
        let cover = try #require(dune.fields["cover"]?.assets.first, "external storage becomes an ASSET")
        #expect(cover.size == Int64(LibraryStore.cover.count))
        #expect(cover.sha256 == SHA256Hasher.digest(LibraryStore.cover))
        let solaris = try mapped.record("Book", "title", "Solaris")
        #expect(solaris.fields["price"] == nil && solaris.fields["cover"] == nil, "null values are no fields")
    }

    @Test func orderedOneToManyKeepsItsOrderOnTheChild() throws {
        let mapped = try map { try MappingPlan.preset("type-prefixed", for: $0) }
        let order = Dictionary(
            uniqueKeysWithValues: mapped.records("Chapter").compactMap { chapter -> (String, Int64)? in
                guard case .string(let title)? = chapter.fields["title"], case .int64(let position)? = chapter.fields["bookOrder"] else { return nil }
                return (title, position)
            })
        #expect(order == ["Desert": 0, "Prologue": 1, "Arrakis": 2])
    }

    @Test func plainPresetWritesManyToManyAsAReferenceListAndStableNames() throws {
        let first = try map { try MappingPlan.preset("plain", for: $0) }
        let dune = try first.record("Book", "title", "Dune")
        #expect(dune.zoneID == .default)
        #expect(dune.recordName != LibraryStore.duneName, "plain ignores kept identities")
        let tags = first.records("Tag").map(\.recordName).sorted()
        #expect(dune.fields["tags"]?.references.map(\.recordName).sorted() == tags)
        #expect(first.records("Tag").allSatisfy { $0.fields["books"] == nil }, "the list lives on one side only")
        #expect(first.records("Shelf").first?.fields["books"] == nil, "a to-many with a to-one inverse lives on the child")
        let pattern = /^Book\.[0-9A-F]{8}-[0-9A-F]{4}-5[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/
        #expect(dune.recordName.wholeMatch(of: pattern) != nil, "\(dune.recordName)")
        #expect(
            dune.recordName
                == RecordNaming.deterministicName(
                    recordType: "Book", separator: ".", storeUUID: LibraryStore.storeUUID, entity: "Book", primaryKey: 1))
        let second = try map { try MappingPlan.preset("plain", for: $0) }
        #expect(first.changes.map(\.change) == second.changes.map(\.change), "a second run gives the same records")
    }

    @Test func planChoicesApply() throws {
        let mapped = try map { schema in
            var plan = try MappingPlan.preset("scorebook", for: schema)
            plan.entities["Book", default: EntityPlan()].fields = [
                "color": FieldPlan(convert: "rgba"), "price": FieldPlan(convert: "string"), "title": FieldPlan(rename: "name"),
                "shelf": FieldPlan(action: "VALIDATE"), "cover": FieldPlan(asset: false),
            ]
            plan.entities["Book", default: EntityPlan()].exclude = ["isbn"]
            plan.entities["Chapter"] = EntityPlan(skip: true)
            plan.entities["Tag"] = EntityPlan(recordType: "Label", zone: "Labels")
            return plan
        }
        let dune = try mapped.record("Book", "name", "Dune")
        #expect(dune.recordName == LibraryStore.duneName)
        #expect(dune.zoneID.zoneName == "ShelfZone", "the archived record ID's zone wins")
        #expect(dune.fields["color"] == FieldList(.double, [.double(0.1), .double(0.2), .double(0.3), .double(1)]).map(FieldValue.list))
        #expect(dune.fields["price"] == .string("9.99"))
        #expect(dune.fields["isbn"] == nil)
        #expect(dune.fields["cover"] == .bytes(Data(LibraryStore.cover)))
        #expect(mapped.records("Chapter").isEmpty)
        let labels = mapped.records("Label")
        #expect(labels.count == 2 && labels.allSatisfy { $0.zoneID.zoneName == "Labels" && $0.recordName.hasPrefix("Label|~|") })
        let solaris = try mapped.record("Book", "name", "Solaris")
        #expect(solaris.zoneID.zoneName == "ScorebookData")
        // Dune (zone from its archived ID) and its shelf are in different zones, so Book.shelf holds names throughout.
        let shelf = try #require(mapped.records("Shelf").first)
        #expect(dune.fields["shelf"] == .string(shelf.recordName) && solaris.fields["shelf"] == .string(shelf.recordName))
        let sameZone = try map { schema in
            var plan = try MappingPlan.preset("plain", for: schema)
            plan.entities["Book"] = EntityPlan(fields: ["shelf": FieldPlan(action: "VALIDATE")])
            return plan
        }
        #expect(try sameZone.record("Book", "title", "Solaris").fields["shelf"]?.references.first?.action == .validate)
    }

    @Test func coreDataMirrorPresetHasNSPersistentCloudKitContainersLayout() throws {
        let mapped = try map { try MappingPlan.preset("nspersistentcloudkitcontainer", for: $0) }
        let zone = ZoneID(zoneName: "com.apple.coredata.cloudkit.zone")
        let records = mapped.changes.compactMap { if case .record(let record) = $0.change { record } else { nil } }
        #expect(records.allSatisfy { $0.zoneID == zone })
        #expect(Set(records.map(\.recordType)) == ["CD_Shelf", "CD_Book", "CD_Chapter", "CD_Tag", "CD_DeletedCloudKitObject", "CDMR"])
        #expect(records.allSatisfy { UUID(uuidString: $0.recordName)?.uuidString == $0.recordName }, "record names are UUIDs")
        let books = mapped.records("CD_Book")
        #expect(books.count == 3)
        let dune = try #require(books.first { $0.fields["CD_title"] == .string("Dune") })
        let ebook = try #require(books.first { $0.fields["CD_entityName"] == .string("Ebook") }, "a sub-entity takes its root's record type")
        #expect(ebook.fields["CD_format"] == .string("epub"))
        #expect(dune.fields["CD_entityName"] == .string("Book"))
        #expect(dune.fields["CD_price"] == .double(9.99) && dune.fields["CD_published"] == .timestamp(978_307_200_500))
        #expect(dune.fields["CD_cover"] == .bytes(Data(LibraryStore.cover)), "a small value stays inline")
        #expect(dune.fields["CD_recordID"]?.scalarType == .bytes, "transformables are Data")
        let shelf = try #require(mapped.records("CD_Shelf").first)
        #expect(dune.fields["CD_shelf"] == .string(shelf.recordName), "to-one is the related record's name")
        #expect(shelf.fields["CD_books"] == nil, "to-many lives on the other side")
        #expect(mapped.records("CD_Chapter").allSatisfy { $0.fields["CD_book"] == .string(dune.recordName) })
        #expect(books.allSatisfy { $0.fields["CD_tags"] == nil } && mapped.records("CD_Tag").allSatisfy { $0.fields["CD_books"] == nil })
        let tags = Dictionary(
            uniqueKeysWithValues: mapped.records("CD_Tag").compactMap { tag -> (String, String)? in
                guard case .string(let name)? = tag.fields["CD_name"] else { return nil }
                return (name, tag.recordName)
            })
        let solaris = try #require(books.first { $0.fields["CD_title"] == .string("Solaris") })
        let links = Set(
            mapped.records("CDMR").map { link in
                [link.fields["CD_entityNames"], link.fields["CD_recordNames"], link.fields["CD_relationships"]]
            })
        let expected: Set<[FieldValue?]> = Set(
            [(dune, "classic"), (dune, "desert"), (solaris, "classic")].map { book, tag in
                [.string("Book:Tag"), .string("\(book.recordName):\(tags[tag] ?? "?")"), .string("tags:books")]
            })
        #expect(links == expected, "one CDMR record per many-to-many link, parts ordered by entity name")
        let large = try map { schema in
            var plan = try MappingPlan.preset("nspersistentcloudkitcontainer", for: schema)
            plan.entities["Book"] = EntityPlan(fields: ["cover": FieldPlan(asset: true)])
            return plan
        }
        let withAsset = try #require(large.records("CD_Book").first { $0.fields["CD_title"] == .string("Dune") })
        #expect(withAsset.fields["CD_cover"] == nil)
        #expect(withAsset.fields["CD_cover_ckAsset"]?.assets.first?.size == Int64(LibraryStore.cover.count))
    }

    @Test func coreDataMirrorPresetKeepsTheMirrorsRecordNames() throws {
        let mapped = try map(mirrored: true) { try MappingPlan.preset("nspersistentcloudkitcontainer", for: $0) }
        let shelf = try #require(mapped.records("CD_Shelf").first)
        #expect(shelf.recordName == LibraryStore.mirroredShelf)
        let dune = try #require(mapped.records("CD_Book").first { $0.fields["CD_title"] == .string("Dune") })
        #expect(dune.recordName == LibraryStore.mirroredDune)
        #expect(dune.fields["CD_shelf"] == .string(LibraryStore.mirroredShelf))
        let solaris = try #require(mapped.records("CD_Book").first { $0.fields["CD_title"] == .string("Solaris") })
        #expect(UUID(uuidString: solaris.recordName) != nil && solaris.recordName != LibraryStore.mirroredDune, "the rest get new UUIDs")
        #expect(mapped.changes.allSatisfy { !$0.problems.contains { $0.contains("ANSCK") } })
    }

    @Test func uuidV5MatchesRFC4122() {
        let dns: [UInt8] = [0x6B, 0xA7, 0xB8, 0x10, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8]
        #expect(RecordNaming.uuidV5("python.org", namespace: dns).uuidString == "886313E1-3B8A-5372-9B90-0C9AEE199E5D")
    }
}

/// A child whose zone follows two parents: when they disagree it goes to the first one's zone and says so.
@Suite struct ZoneParentsTests {
    @Test(arguments: [false, true])
    func conflictingParentsAreReported(sameZone: Bool) throws {
        let scratch = try Scratch()
        let builder = CoreDataStoreBuilder(entities: [
            EntitySpec(
                "Garage", attributes: [AttributeSpec("name", "String")],
                relationships: [RelationshipSpec("cars", to: "Car", inverse: "garage", toMany: true)]),
            EntitySpec(
                "Owner", attributes: [AttributeSpec("name", "String")],
                relationships: [RelationshipSpec("cars", to: "Car", inverse: "owner", toMany: true)]),
            EntitySpec(
                "Car", attributes: [AttributeSpec("name", "String")],
                relationships: [RelationshipSpec("garage", to: "Garage", inverse: "cars"), RelationshipSpec("owner", to: "Owner", inverse: "cars")]),
        ])
        let garage = builder.insert("Garage", ["name": .text("North")])
        let owner = builder.insert("Owner", ["name": .text("Ada")])
        let car = builder.insert("Car", ["name": .text("Beetle")])
        builder.relate(car, "garage", garage)
        builder.relate(car, "owner", owner)
        let store = try CoreDataStore(path: try builder.write(to: scratch.file("garage"), storeName: "Garage.sqlite"))
        let plan = MappingPlan(
            separator: ".",
            entities: [
                "Garage": EntityPlan(zone: "GarageZone"), "Owner": EntityPlan(zone: sameZone ? "GarageZone" : "OwnerZone"),
                "Car": EntityPlan(zoneFrom: ["garage", "owner"]),
            ])
        let mapper = try StoreRecordMapper(store: store, plan: plan, assets: try StoreAssets(temporaryDirectory: scratch.path))
        var mapped: [StoreRecordMapper.Mapped] = []
        try mapper.run { mapped.append($0) }
        let carChange = try #require(mapped.first { $0.change.recordType == "Car" })
        #expect(carChange.change.zoneID.zoneName == "GarageZone", "the first parent's zone")
        let conflicts = carChange.problems.filter { $0.contains("parents in different zones") }
        #expect(conflicts.count == (sameZone ? 0 : 1), "\(carChange.problems)")
        #expect(sameZone || conflicts.first?.contains("garage: GarageZone, owner: OwnerZone") == true, "\(conflicts)")
    }
}

/// A list whose targets turn out to be in another zone part-way through: the whole list holds names.
@Suite struct CrossingListTests {
    @Test func aListThatCrossesPartWayHoldsNamesThroughout() throws {
        let scratch = try Scratch()
        let builder = CoreDataStoreBuilder(entities: [
            EntitySpec(
                "Item", attributes: [AttributeSpec("recordID", "Transformable", transformer: "NSSecureUnarchiveFromData")]),
            EntitySpec(
                "Shelf", attributes: [AttributeSpec("label", "String")],
                relationships: [RelationshipSpec("items", to: "Item", inverse: nil, toMany: true)]),
        ])
        let near = builder.insert("Item", ["recordID": SampleStores.archivedRecordID("Item.near", zone: "ShelfZone")])
        let far = builder.insert("Item", ["recordID": SampleStores.archivedRecordID("Item.far", zone: "OtherZone")])
        let shelf = builder.insert("Shelf", ["label": .text("Mixed")])
        builder.relate(shelf, "items", [near, far])
        let store = try CoreDataStore(path: try builder.write(to: scratch.file("shelf"), storeName: "Shelf.sqlite"))
        let plan = MappingPlan(
            separator: ".",
            entities: ["Item": EntityPlan(name: NamePlan(archivedRecordID: "recordID")), "Shelf": EntityPlan(zone: "ShelfZone")])
        let mapper = try StoreRecordMapper(store: store, plan: plan, assets: try StoreAssets(temporaryDirectory: scratch.path))
        var mapped: [StoreRecordMapper.Mapped] = []
        try mapper.run { mapped.append($0) }
        let shelfChange = try #require(mapped.first { $0.change.recordType == "Shelf" })
        guard case .record(let record) = shelfChange.change, case .list(let items)? = record.fields["items"] else {
            Issue.record("the shelf should hold its items as a list: \(shelfChange.change)")
            return
        }
        #expect(items.elementType == .string)
        #expect(items.elements == [.string("Item.near"), .string("Item.far")], "the target written before the crossing is a name too")
        #expect(shelfChange.problems.filter { $0.contains("cannot cross zones") }.count == 1, "\(shelfChange.problems)")
    }
}
