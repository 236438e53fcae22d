import FerryCore
import FerryJSON
import FerryTesting
import Foundation
import Testing

/// `ferry inspect` and `ferry dump` on Core Data stores, through the built binary.
@Suite struct StoreCommandTests {
    static let root = TestEnvironment.packageRoot
    static let cars = "Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"
    static let scorebook = "Samples/scorebook/store/Scorebook.sqlite"

    /// Output with the checkout's location removed, so golden files hold on any machine.
    private func portable(_ text: String) -> String {
        normalized(text.replacingOccurrences(of: Self.root + "/", with: ""))
    }

    @Test func inspectDescribesTheSampleStore() throws {
        let result = try ferry(["inspect", Self.cars], in: Self.root)
        #expect(result.status == 0, "\(result.errors)")
        try expectSnapshot(portable(result.output), named: "inspect-cars-store.txt")
        let json = try ferry(["inspect", Self.cars, "--json"], in: Self.root)
        let report = try #require(try JSONParser.parse(json.output).objectValue)
        #expect(report["message_type"] == "result")
        #expect(report["model_source_kind"] == "xcdatamodeld")
        let counts = report["entities"]?.arrayValue?.compactMap { entity -> (String, Int64)? in
            guard let name = entity.objectValue?["name"]?.stringValue, let count = entity.objectValue?["count"]?.int64Value else { return nil }
            return (name, count)
        }
        #expect(counts.map { Dictionary(uniqueKeysWithValues: $0) } == ["Bus": 2, "Car": 3, "DeletedCloudKitObject": 1, "Note": 6, "Truck": 2])
        #expect(report["external_data_files"] == 1)
    }

    @Test func dumpPrintsEveryObjectAsNDJSON() throws {
        let result = try ferry(["dump", Self.scorebook], in: Self.root)
        #expect(result.status == 0, "\(result.errors)")
        try expectSnapshot(result.output, named: "dump-scorebook.ndjson")
        #expect(result.errors.contains("dumped 12 objects"))
        let notes = try ferry(["dump", Self.cars, "--entity", "Note", "--json"], in: Self.root)
        let lines = notes.output.split(separator: "\n").map { try? JSONParser.parse(String($0)).objectValue }
        #expect(lines.filter { $0?["message_type"] == "object" }.count == 6)
        let summary = lines.last { $0?["message_type"] == "summary" }
        #expect(summary??["objects"] == 6)
    }

    @Test func dumpRefusesAnUnknownEntityWithTheChoices() throws {
        let result = try ferry(["dump", Self.cars, "--entity", "Boat"], in: Self.root)
        #expect(result.status == 64)
        #expect(result.errors.contains("no entity Boat"))
        #expect(result.errors.contains("Truck"))
        #expect(result.output.isEmpty)
    }

    @Test func storeErrorsHaveTheirExitCodes() throws {
        let scratch = try Scratch()
        try scratch.write("notes.sqlite", "not a database")
        let notSQLite = try ferry(["dump", "notes.sqlite"], in: scratch.path)
        #expect(notSQLite.status == 65)
        #expect(notSQLite.errors.contains("notes.sqlite"))
        #expect(notSQLite.errors.contains("not an SQLite database"))
        let missing = try ferry(["inspect", "gone.sqlite"], in: scratch.path)
        #expect(missing.status == 66)
        let noCache = try ferry(["dump", "\(Self.root)/\(Self.cars)", "--model-cache", "--json"], in: scratch.path)
        #expect(noCache.status == 66)
        let exit = noCache.errors.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)).objectValue }.first {
            $0["message_type"] == "exit_error"
        }
        #expect(exit?["error"] == "coredata.model-not-found")
        let both = try ferry(["dump", Self.cars, "--model-cache", "--infer-model"], in: Self.root)
        #expect(both.status == 64)
    }

    @Test func dumpReadsTheWriteAheadLogWithoutTouchingTheFixture() throws {
        guard let fixtures = SharedFixtures.directory else { return }
        let folder = "\(fixtures)/wibosco-CoreDataMigration-Example/sqlite"
        let before = try DirectoryFingerprint(folder)
        let result = try ferry(["dump", "\(folder)/CoreDataMigration_Example_WAL.sqlite", "--entity", "Post"], in: folder)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.split(separator: "\n").count == 84)
        #expect(try DirectoryFingerprint(folder) == before)
    }
}
