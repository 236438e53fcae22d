import FerryCore
import FerryCoreData
import FerryTesting
import Foundation
import Testing

/// Inputs that are not (good) Core Data stores: each is refused with an error naming the file, never a crash.
@Suite struct HostileStoreTests {
    /// Opens and reads everything, returning the error.
    private func failure(_ path: String, model: ModelChoice = .automatic) -> (any Error)? {
        do {
            let store = try CoreDataStore(path: path, model: model)
            try store.forEachObject { _ in }
            return nil
        } catch {
            return error
        }
    }

    private func code(_ error: (any Error)?) -> String? { (error as? any FerryError)?.codeName }

    private func message(_ error: (any Error)?) -> String { (error as? any FerryError)?.message ?? "" }

    @Test func refusesFilesThatAreNotSQLite() throws {
        let scratch = try Scratch()
        let text = try scratch.write("notes.sqlite", "this is not a database\n")
        let error = failure(text)
        #expect(code(error) == "coredata.not-sqlite")
        #expect(message(error).contains(text))
        let empty = try scratch.write("empty.sqlite", Data())
        #expect(code(failure(empty)) == "coredata.not-sqlite")
        #expect(code(failure(scratch.file("missing.sqlite"))) == "core.file-not-found")
        #expect(code(failure(scratch.path)) != nil)
    }

    @Test func refusesSQLiteThatIsNotCoreData() throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try Scratch()
        let path = scratch.file("plain.sqlite")
        try SQLiteShell.execute(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes VALUES (1, 'hi');")
        let error = failure(path)
        #expect(code(error) == "coredata.not-core-data")
        #expect(message(error).contains("Z_PRIMARYKEY"))
    }

    @Test func refusesDamagedMetadata() throws {
        guard let fixture = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite") else { return }
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(fixture, into: scratch)
        try SQLiteShell.execute(copy, "UPDATE Z_METADATA SET Z_PLIST = X'62706C6973743030FFFF'; PRAGMA wal_checkpoint(TRUNCATE);")
        let error = failure(copy)
        #expect(code(error) == "coredata.corrupt")
        #expect(message(error).contains("Z_PLIST"))
        try SQLiteShell.execute(copy, "DELETE FROM Z_METADATA; PRAGMA wal_checkpoint(TRUNCATE);")
        #expect(code(failure(copy)) == "coredata.corrupt")
    }

    @Test func refusesAModelCacheThatIsNotDeflateAndFallsBackWhenNotAskedForIt() throws {
        guard let fixture = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite") else { return }
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(fixture, into: scratch)
        try SQLiteShell.execute(copy, "UPDATE Z_MODELCACHE SET Z_CONTENT = X'DEADBEEF00112233'; PRAGMA wal_checkpoint(TRUNCATE);")
        let error = failure(copy, model: .modelCache)
        #expect(code(error) == "coredata.invalid-model")
        #expect(message(error).contains("Z_MODELCACHE"))
        // Without a choice, a broken cache is passed over (with a note) for inference.
        let store = try CoreDataStore(path: copy)
        #expect(store.model.source == .inferred)
        #expect(store.model.notes.contains { $0.contains("Z_MODELCACHE") })
    }

    @Test func refusesAModelFileThatIsNotAModel() throws {
        guard let fixture = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite") else { return }
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(fixture, into: scratch)
        let mom = try scratch.write("Bad.mom", "not an archive")
        #expect(code(failure(copy, model: .file(mom))) == "coredata.invalid-model")
        try scratch.write("Bad.xcdatamodel/contents", "<model><entity name=\"A\"><attribute name=")
        #expect(code(failure(copy, model: .file(scratch.file("Bad.xcdatamodel")))) == "coredata.invalid-model")
        #expect(code(failure(copy, model: .file(scratch.file("Nowhere.momd")))) == "core.file-not-found")
        let text = try scratch.write("model.txt", "x")
        #expect(code(failure(copy, model: .file(text))) == "coredata.model-not-found")
    }

    /// A loop through `Z_SUPER` (a self-reference, two entities, three) or a parent that is no entity is refused at
    /// once, naming the entities, whichever model is used; walking such a hierarchy used to never end.
    @Test(arguments: [
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = 1 WHERE Z_ENT = 1", "Book (Z_ENT 1) → Book (Z_ENT 1)"),
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = 6 WHERE Z_ENT = 6", "loop"),
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = 2 WHERE Z_ENT = 1", "GraphicNovel (Z_ENT 2)"),
        (
            "UPDATE Z_PRIMARYKEY SET Z_SUPER = 2 WHERE Z_ENT = 1; UPDATE Z_PRIMARYKEY SET Z_SUPER = 3 WHERE Z_ENT = 2; "
                + "UPDATE Z_PRIMARYKEY SET Z_SUPER = 1 WHERE Z_ENT = 3", "loop"
        ),
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = 999 WHERE Z_ENT = 2", "Z_SUPER 999"),
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = 16002 WHERE Z_ENT = 16001; UPDATE Z_PRIMARYKEY SET Z_SUPER = 16001 WHERE Z_ENT = 16002", "loop"),
    ])
    func refusesALoopInTheEntityHierarchy(statement: String, expected: String) throws {
        // Book 1 ← GraphicNovel 2, Feedback 3, Page 4, Writer 5 ← Author 6, and three history entities.
        guard let fixture = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite") else { return }
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(fixture, into: scratch)
        try SQLiteShell.execute(copy, statement + "; PRAGMA wal_checkpoint(TRUNCATE);")
        for model in [ModelChoice.automatic, .inferred, .modelCache] {
            let clock = ContinuousClock()
            let started = clock.now
            let error = failure(copy, model: model)
            #expect(code(error) == "coredata.corrupt", "\(model): \(String(describing: error))")
            #expect(message(error).contains(expected), "\(message(error))")
            #expect(message(error).contains("Z_ENT"))
            // Refused before anything walks the hierarchy (it used to run for minutes); generous for a loaded machine.
            #expect(clock.now - started < .seconds(10))
        }
    }

    @Test func refusesRepeatedEntityRows() throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try Scratch()
        let path = scratch.file("twice.sqlite")
        try SQLiteShell.execute(
            path,
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER); "
                + "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB); "
                + "INSERT INTO Z_METADATA VALUES (1, 'A-B', NULL); "
                + "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Car', 0, 0), (1, 'Bus', 0, 0); "
                + "CREATE TABLE ZCAR (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER);")
        let error = failure(path, model: .inferred)
        #expect(code(error) == "coredata.corrupt")
        #expect(message(error).contains("two rows for Z_ENT 1"))
    }

    @Test func refusesCorruptPagesWithTheFileNamed() throws {
        guard let fixture = StoreFixtures.path("wibosco-CoreDataMigration-Example/sqlite/CoreDataMigration_Example_3.sqlite") else { return }
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(fixture, into: scratch)
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: copy)))
        // Overwrite every page after the first few with noise: b-tree pages become unreadable.
        var generator = SystemRandomNumberGenerator()
        for index in stride(from: 4096 * 3, to: bytes.count, by: 1) where index % 4096 < 2048 {
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: copy))
        let error = failure(copy)
        #expect(code(error) == "coredata.corrupt" || code(error) == "coredata.not-core-data")
        #expect(message(error).contains(copy))
        // A truncated store: the header promises pages that are not there.
        try Data(bytes.prefix(4096 * 2 + 100)).write(to: URL(fileURLWithPath: copy))
        let truncated = failure(copy)
        #expect(truncated != nil)
        #expect(message(truncated).contains(copy))
    }

    @Test func neverCrashesOnRandomDamageToARealStore() throws {
        guard let fixture = StoreFixtures.path("alemar11-CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite") else { return }
        let scratch = try Scratch()
        let original = try Array(Data(contentsOf: URL(fileURLWithPath: fixture)))
        var generator = SeededGenerator(seed: 42)
        for round in 0..<40 {
            var bytes = original
            for _ in 0..<(1 + round % 8) {
                let index = Int.random(in: 100..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            let path = scratch.file("damaged-\(round).sqlite")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            // Either it reads (damage in unused space) or it fails with one of Ferry's errors.
            if let error = failure(path) { #expect(error is any FerryError, "round \(round): \(error)") }
        }
    }
}
