import FerryCore
import FerryCoreData
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// Stores written by the test-support builder: every attribute type and relationship kind, with known contents.
@Suite struct BuiltStoreTests {
    /// A written store; the scratch folder lives as long as this value.
    private struct Written {
        let scratch: Scratch
        let path: String
        let handles: GarageStore.Handles
    }

    private func written(journal: CoreDataStoreBuilder.Journal = .walCheckpointed) throws -> Written {
        let scratch = try Scratch()
        let (builder, handles) = GarageStore.build()
        let path = try builder.write(to: scratch.file("garage"), storeName: "Garage.sqlite", journal: journal)
        return Written(scratch: scratch, path: path, handles: handles)
    }

    private func objects(_ summary: StoreCrossCheck.Summary) -> [String: ManagedObject] {
        Dictionary(summary.all.map { ("\($0.entity)/\($0.primaryKey)", $0) }, uniquingKeysWith: { first, _ in first })
    }

    private func keys(_ value: RelationshipValue?) -> [Int64] {
        switch value {
        case .toOne(let target)?: target.map { [$0.primaryKey] } ?? []
        case .toMany(let targets)?: targets.map(\.primaryKey)
        case nil: []
        }
    }

    @Test func readsEveryAttributeType() throws {
        guard SQLiteShell.isAvailable else { return }
        let built = try written()
        let (path, handles) = (built.path, built.handles)
        let summary = try StoreCrossCheck.run(store: path, model: .automatic, keepObjects: true)
        #expect(summary.store.model.source.kind == "xcdatamodeld")
        let byKey = objects(summary)
        let beetle = try #require(byKey["Car/\(handles.beetle.primaryKey)"])
        #expect(beetle.attribute("name") == .string("Beetle"))
        #expect(beetle.attribute("added") == .date(500_000_000.25))
        #expect(beetle.attribute("doors") == .integer(2))
        #expect(beetle.attribute("mileage") == .integer(120_000))
        #expect(beetle.attribute("checksum") == .integer(Int64.max))
        #expect(beetle.attribute("price") == .decimal("10.11"))
        #expect(beetle.attribute("weight") == .double(800.5))
        #expect(beetle.attribute("rating") == .double(4.5))
        #expect(beetle.attribute("electric") == .boolean(false))
        #expect(beetle.attribute("serial") == .uuid(UUID(uuidString: "0E6F2A40-1111-4222-8333-444455556666") ?? UUID()))
        #expect(beetle.attribute("manual") == .uri("https://example.com/beetle.pdf"))
        #expect(beetle.attribute("color") == .string("yellow"))
        guard case .externalData(let photo)? = beetle.attribute("photo") else {
            Issue.record("photo should be external data, got \(String(describing: beetle.attribute("photo")))")
            return
        }
        #expect(photo.size == Int64(handles.photo.count))
        #expect(try photo.path.map { try InputFile.contents(of: $0) } == handles.photo)
        guard case .archived(.object(let specs), let bytes)? = beetle.attribute("specs") else {
            Issue.record("specs should be a decoded archive, got \(String(describing: beetle.attribute("specs")))")
            return
        }
        #expect(specs.content == .dictionary([]))
        #expect(bytes == GarageStore.specsArchive)
        #expect(beetle.attribute("sketch") == .opaque([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]))
        #expect(beetle.problems.isEmpty)

        // A derived attribute is a plain column; a type Ferry does not know is kept raw, with a note, not a problem.
        let ada = try #require(byKey["Person/\(handles.ada.primaryKey)"])
        #expect(ada.attribute("nameLength") == .integer(3))
        #expect(ada.attribute("embedding") == .raw(.blob([0, 0, 128, 63])))
        #expect(ada.problems.isEmpty)
        #expect(summary.store.model.notes.contains { $0.contains("Person.embedding") && $0.contains("Vector") })

        let unimog = try #require(byKey["Truck/\(handles.unimog.primaryKey)"])
        #expect(unimog.attribute("added") == .date(500_000_000))  // stored as INTEGER
        #expect(unimog.attribute("color") == .integer(3))  // the sibling's ZCOLOR1 column
        #expect(unimog.attribute("photo") == .data([1, 2, 3]))  // 0x01 inline marker removed
        #expect(unimog.attribute("electric") == .boolean(true))
    }

    @Test func reportsMissingExternalFilesAndMistypedValuesPerObject() throws {
        guard SQLiteShell.isAvailable else { return }
        let built = try written()
        let (path, handles) = (built.path, built.handles)
        let summary = try StoreCrossCheck.run(store: path, model: .automatic, keepObjects: true)
        let zoe = try #require(summary.all.first { $0.attribute("name") == .string("Zoe") })
        guard case .externalData(let photo)? = zoe.attribute("photo") else {
            Issue.record("photo should be external data")
            return
        }
        #expect(photo.uuid == handles.missingPhoto.uuidString)
        #expect(photo.size == nil)
        #expect(zoe.attribute("mileage") == .unexpected(.text("lots")))
        #expect(zoe.problems.count == 2)
        #expect(zoe.problems.contains { $0.contains("missing") && $0.contains(handles.missingPhoto.uuidString) })
        #expect(zoe.problems.contains { $0.contains("mileage") && $0.contains("TEXT") })
    }

    @Test func resolvesEveryRelationshipKindInOrder() throws {
        guard SQLiteShell.isAvailable else { return }
        let built = try written()
        let (path, handles) = (built.path, built.handles)
        let summary = try StoreCrossCheck.run(store: path, model: .automatic, keepObjects: true)
        let byKey = objects(summary)
        let schema = summary.store.schema
        let vehicle = try #require(schema.entity(named: "Car"))
        func storage(_ entity: String, _ relationship: String) -> StoreSchema.Storage? {
            schema.entity(named: entity)?.relationships.first { $0.description.name == relationship }?.storage
        }
        // Storage found by introspection.
        #expect(vehicle.table == "ZVEHICLE")
        guard case .foreignKey("ZVEHICLE", let entityColumn?)? = storage("Part", "vehicle") else {
            Issue.record("Part.vehicle should be a foreign key with an entity column: \(String(describing: storage("Part", "vehicle")))")
            return
        }
        #expect(entityColumn.hasSuffix("_VEHICLE"))
        #expect(storage("Car", "parts") == .inverseForeignKey(column: "ZVEHICLE", orderColumn: "Z_FOK_VEHICLE"))
        guard case .joinTable(_, _, "REFLEXIVE", nil)? = storage("Person", "friends") else {
            Issue.record("Person.friends should be a reflexive join table: \(String(describing: storage("Person", "friends")))")
            return
        }
        guard case .joinTable(_, _, _, let order?)? = storage("Garage", "members") else {
            Issue.record("Garage.members should be an ordered join table")
            return
        }
        #expect(order.hasPrefix("Z_FOK_"))
        guard case .joinTable? = storage("Garage", "visitors") else {
            Issue.record("Garage.visitors (no inverse) should be a join table: \(String(describing: storage("Garage", "visitors")))")
            return
        }

        // Values.
        let beetle = try #require(byKey["Car/\(handles.beetle.primaryKey)"])
        #expect(keys(beetle.relationship("parts")) == [handles.parts[2], handles.parts[0], handles.parts[1]].map(\.primaryKey))
        #expect(keys(beetle.relationship("owner")) == [handles.ada.primaryKey])
        let ada = try #require(byKey["Person/\(handles.ada.primaryKey)"])
        #expect(Set(keys(ada.relationship("vehicles"))) == [handles.beetle.primaryKey, handles.unimog.primaryKey])
        if case .toMany(let vehicles)? = ada.relationship("vehicles") {
            #expect(Set(vehicles.map(\.entity)) == ["Car", "Truck"])
        }
        #expect(Set(keys(ada.relationship("friends"))) == [handles.bob.primaryKey, handles.cy.primaryKey])
        #expect(Set(keys(ada.relationship("followers"))) == [handles.bob.primaryKey, handles.cy.primaryKey])
        #expect(keys(ada.relationship("passport")).count == 1)
        let passport = try #require(summary.all.first { $0.entity == "Passport" })
        #expect(keys(passport.relationship("holder")) == [handles.ada.primaryKey])
        let cy = try #require(byKey["Person/\(handles.cy.primaryKey)"])
        #expect(keys(cy.relationship("following")) == [handles.ada.primaryKey, handles.bob.primaryKey])
        let garage = try #require(byKey["Garage/\(handles.garage.primaryKey)"])
        #expect(keys(garage.relationship("members")) == [handles.cy.primaryKey, handles.ada.primaryKey])
        #expect(keys(garage.relationship("visitors")) == [handles.bob.primaryKey])
        #expect(keys(cy.relationship("garages")) == [handles.garage.primaryKey])

        // The stray part's vehicle does not exist: kept, and reported by inspection.
        let stray = try #require(summary.all.first { $0.attribute("name") == .string("stray") })
        #expect(keys(stray.relationship("vehicle")) == [99])
        #expect(summary.unresolvedToOne == ["Part.vehicle": 1])
        #expect(try StoreInspection(summary.store).danglingReferences == ["Part.vehicle": 1])
    }

    @Test func matchesARenamedEntityAndKeepsAbstractRootsEmpty() throws {
        guard SQLiteShell.isAvailable else { return }
        let built = try written()
        let path = built.path
        let summary = try StoreCrossCheck.run(store: path, model: .automatic)
        #expect(summary.store.schema.entity(named: "Workshop")?.storeName == "Shed")
        #expect(summary.objects["Workshop"] == 1)
        #expect(summary.objects["Vehicle"] == nil)
        #expect(summary.objects["Car"] == 2)
        #expect(summary.store.schema.warnings.isEmpty, "\(summary.store.schema.warnings)")
    }

    @Test(arguments: [CoreDataStoreBuilder.Journal.walPending, .rollback, .walCheckpointed])
    func readsEveryJournalStateWithoutTouchingTheFiles(journal: CoreDataStoreBuilder.Journal) throws {
        guard SQLiteShell.isAvailable else { return }
        let built = try written(journal: journal)
        let path = built.path
        if journal == .walPending {
            let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            #expect(walSize > 0)
        }
        let summary = try StoreCrossCheck.run(store: path, model: .automatic)
        #expect(summary.objects.values.reduce(0, +) == 13)
    }

    @Test func inferenceWithoutTheModelFindsTheSameObjectsAndLinks() throws {
        guard SQLiteShell.isAvailable else { return }
        let built = try written()
        let path = built.path
        let modeled = try StoreCrossCheck.run(store: path, model: .automatic, keepObjects: true)
        let inferred = try StoreCrossCheck.run(store: path, model: .inferred, keepObjects: true)
        #expect(modeled.objects.values.reduce(0, +) == inferred.objects.values.reduce(0, +))
        // Nothing stored is dropped: every column is an attribute or a relationship of the guessed model.
        #expect(inferred.store.schema.unexplainedColumns.isEmpty, "\(inferred.store.schema.unexplainedColumns)")
        // Links that can be told from the schema: the polymorphic part → vehicle, and every join table.
        func links(_ summary: StoreCrossCheck.Summary, _ names: Set<String>) -> Set<String> {
            Set(
                summary.all.flatMap { object in
                    object.relationships.filter { names.contains($0.name) }.flatMap { relationship -> [String] in
                        switch relationship.value {
                        case .toOne(let target?): ["\(object.entity)/\(object.primaryKey).\(relationship.name)->\(target.primaryKey)"]
                        case .toMany(let targets): targets.map { "\(object.entity)/\(object.primaryKey).\(relationship.name)->\($0.primaryKey)" }
                        default: []
                        }
                    }
                })
        }
        let names: Set<String> = ["vehicle", "friends", "members", "visitors", "following"]
        #expect(links(modeled, names) == links(inferred, names))
        #expect(inferred.store.schema.entity(named: "Shed") != nil)  // the renamed root's table found by its rows
    }
}

extension CoreDataStoreBuilder.Journal: CustomTestStringConvertible {
    public var testDescription: String {
        switch self {
        case .walPending: "WAL with pending frames"
        case .walCheckpointed: "WAL checkpointed"
        case .rollback: "rollback journal"
        }
    }
}
