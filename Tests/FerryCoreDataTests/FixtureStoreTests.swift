import FerryCore
import FerryCoreData
import FerryPlist
import FerryTesting
import Foundation
import Testing

/// Every real store in `../shared/fixtures`, read with every model source and checked against the `sqlite3` shell.
@Suite struct FixtureStoreTests {
    static let choices: [ModelChoice] = [.automatic, .modelCache, .inferred]

    @Test(arguments: StoreFixtures.stores, choices)
    func readsEveryStoreWithEveryModelSource(relative: String, choice: ModelChoice) throws {
        guard let store = StoreFixtures.path(relative) else { return }
        if choice == .modelCache, StoreFixtures.withoutModelCache.contains(relative) {
            let error = #expect(throws: CoreDataError.self) { try CoreDataStore(path: store, model: choice) }
            #expect(error?.code == .modelNotFound)
            #expect(error?.message.contains(store) == true)
            return
        }
        let summary = try StoreCrossCheck.run(store: store, model: choice)
        #expect(!summary.objects.isEmpty || relative.contains("_WAL") == false)
        let inspection = try StoreInspection(summary.store)
        #expect(inspection.danglingReferences == summary.unresolvedToOne)
        #expect(inspection.entities.map(\.count).reduce(0, +) == summary.objects.values.reduce(0, +))
        if choice == .inferred {
            #expect(summary.store.model.source == .inferred)
            #expect(summary.store.model.notes.contains { $0.contains("guessed") })
        }
    }

    @Test func readsDataThatLivesOnlyInTheWriteAheadLog() throws {
        guard let store = StoreFixtures.path("wibosco-CoreDataMigration-Example/sqlite/CoreDataMigration_Example_WAL.sqlite") else { return }
        let summary = try StoreCrossCheck.run(store: store, model: .automatic, keepObjects: true)
        #expect(summary.objects == ["Post": 84, "Color": 84])
        // No -shm appeared beside the fixture (the fingerprint check covers changed bytes; this covers the name).
        #expect(!FileManager.default.fileExists(atPath: store + "-shm"))
        // One-to-one stored on both sides: each post's color points back to it.
        let posts = summary.all.filter { $0.entity == "Post" }
        let colors = Dictionary(uniqueKeysWithValues: summary.all.filter { $0.entity == "Color" }.map { ($0.primaryKey, $0) })
        var pairs = 0
        for post in posts {
            guard case .toOne(let color?)? = post.relationship("color"), let target = colors[color.primaryKey] else { continue }
            if case .toOne(let back?)? = target.relationship("post") {
                #expect(back.primaryKey == post.primaryKey)
                pairs += 1
            }
        }
        #expect(pairs == 84)
    }

    @Test func matchesARenamedEntityByItsRenamingIdentifier() throws {
        guard let store = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite") else { return }
        let summary = try StoreCrossCheck.run(store: store, model: .automatic)
        let luxury = try #require(summary.store.schema.entity(named: "LuxuryCar"))
        #expect(luxury.storeName == "ExpensiveSportCar")
        #expect(luxury.description.parentName == "SportCar")
        #expect(summary.store.schema.entity(named: "Car")?.hierarchyNumbers.count == 3)
        // The .momd beside the store holds the version whose hashes are the store's.
        #expect(summary.store.model.source.description.hasSuffix("SampleModel.momd/SampleModel2.mom"))
        let cached = try StoreCrossCheck.run(
            store: try #require(StoreFixtures.path("alemar11-CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite")), model: .modelCache)
        #expect(cached.store.schema.entity(named: "LuxuryCar")?.storeName == "ExpensiveSportCar")
        #expect(summary.store.schema.warnings.isEmpty, "\(summary.store.schema.warnings)")
    }

    @Test func picksTheCompiledModelVersionByTheStoresHashes() throws {
        guard let store = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite") else { return }
        let opened = try CoreDataStore(path: store)
        guard case .compiled(let path) = opened.model.source else {
            Issue.record("expected the .momd beside the store, got \(opened.model.source)")
            return
        }
        #expect(path.hasSuffix("SampleModel3.momd/SampleModel3.mom"))
        #expect(opened.model.choices.contains { $0.contains("model version hashes") })
        #expect(opened.model.notes.isEmpty, "a fitting model is no warning: \(opened.model.notes)")
    }

    @Test func decodesInheritanceUUIDsAndTransformables() throws {
        guard let store = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite") else { return }
        let summary = try StoreCrossCheck.run(store: store, model: .automatic, keepObjects: true)
        #expect(summary.objects["Person"] == 20)
        #expect(summary.objects.filter { ["Car", "SportCar", "ExpensiveSportCar"].contains($0.key) }.values.reduce(0, +) == 125)
        let person = try #require(summary.all.first { $0.entity == "Person" })
        guard case .uuid? = person.attribute("id") else {
            Issue.record("Person.id should be a UUID, got \(String(describing: person.attribute("id")))")
            return
        }
        // Every car's owner is a Person that exists.
        let people = Set(summary.all.filter { $0.entity == "Person" }.map(\.primaryKey))
        for car in summary.all where car.entity.hasSuffix("Car") {
            if case .toOne(let owner?)? = car.relationship("owner") { #expect(people.contains(owner.primaryKey)) }
        }
    }

    @Test func readsIntegerDatesAndCustomTransformerBytes() throws {
        guard let books = StoreFixtures.path("gilpa-iphone_sqlite_test/CoreDataBooks.sqlite"),
            let recipes = StoreFixtures.path("fruitsamples-iPhoneCoreDataRecipes/Recipes.sqlite")
        else { return }
        let bookSummary = try StoreCrossCheck.run(store: books, model: .automatic, keepObjects: true)
        let dates = bookSummary.all.compactMap { object -> Double? in
            if case .date(let seconds)? = object.attribute("copyright") { return seconds }
            return nil
        }
        #expect(dates.count == bookSummary.all.count)
        #expect(dates.allSatisfy { $0 == $0.rounded() })  // stored as whole seconds (INTEGER)
        let recipeSummary = try StoreCrossCheck.run(store: recipes, model: .automatic, keepObjects: true)
        #expect(recipeSummary.objects == ["Image": 9, "Ingredient": 33, "Recipe": 10, "RecipeType": 5] || recipeSummary.objects.count == 4)
        // The inferred model sees an image blob; whatever it is called, its bytes are a JPEG kept as stored.
        let jpegs = recipeSummary.all.flatMap(\.attributes).filter { attribute in
            switch attribute.value {
            case .data(let bytes), .opaque(let bytes): bytes.starts(with: [0xFF, 0xD8])
            default: false
            }
        }
        #expect(!jpegs.isEmpty)
    }

    @Test func decodesArchivedSwiftClassesAndPolymorphicDestinations() throws {
        guard let store = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite") else { return }
        let summary = try StoreCrossCheck.run(store: store, model: .modelCache, keepObjects: true)
        let covers = summary.all.compactMap { object -> ArchivedValue? in
            if case .archived(let value, _)? = object.attribute("frontCover") { return value }
            return nil
        }
        #expect(covers.count == 3)
        #expect(covers.allSatisfy { if case .object(let cover) = $0 { cover.archivedClass.name == "CoreDataPlus_Tests.Cover" } else { false } })
        // A page's book may be a Book or a GraphicNovel: the Z1_BOOK column says which.
        let bookEntities = Set(
            summary.all.compactMap { page -> String? in
                if case .toOne(let book?)? = page.relationship("book") { return book.entity }
                return nil
            })
        #expect(bookEntities == ["Book", "GraphicNovel"])
    }

    @Test func inferenceFindsTheSameStorageAsTheModel() throws {
        guard let store = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite") else { return }
        let inferred = try CoreDataStore(path: store, model: .inferred)
        let cached = try CoreDataStore(path: store, model: .modelCache)
        // The same entities and the same storage for every relationship the cache knows, whichever model is used.
        #expect(Set(inferred.schema.entities.map(\.number)) == Set(cached.schema.entities.map(\.number)))
        let page = try #require(cached.schema.entity(named: "Page"))
        let book = try #require(page.relationships.first { $0.description.name == "book" })
        #expect(book.storage == .foreignKey(column: "ZBOOK", entityColumn: "Z1_BOOK"))
        #expect(cached.ancillaryTables == ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"])
        #expect(cached.schema.ancillaryEntities.map(\.number) == [16001, 16002, 16003])
    }
}

extension ModelChoice: CustomTestStringConvertible {
    public var testDescription: String {
        switch self {
        case .automatic: "automatic"
        case .file(let path): "file \(path)"
        case .modelCache: "model cache"
        case .inferred: "inferred"
        }
    }
}
