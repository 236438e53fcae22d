import FerryCore
import FerryTesting
import Foundation
import Testing

/// What a new user tripped over (issue 32), through the built binary: each input is made in the test, and each run
/// must end with the documented exit code and a message that names the problem.
@Suite struct TripwireCommandTests {
    static let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"

    /// A scratch copy of the sample Core Data store, with its model beside it.
    private func storeCopy() throws -> Scratch {
        let scratch = try Scratch()
        try FileManager.default.copyItem(atPath: "\(Sample.directory)/store", toPath: scratch.file("store"))
        return scratch
    }

    @Test func aLoopInTheEntityHierarchyIsRefusedByEveryVerb() throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try storeCopy()
        let store = "store/CarsTrucksBuses.sqlite"
        try SQLiteShell.execute(scratch.file(store), "UPDATE Z_PRIMARYKEY SET Z_SUPER = 1 WHERE Z_ENT = 1; PRAGMA wal_checkpoint(TRUNCATE);")
        for arguments in [
            ["inspect", store], ["dump", store], ["copy", store, "out.tar.zst"], ["copy", store, "out.ferry"], ["plan", store],
            ["dump", store, "--infer-model"], ["diff", store, store],
        ] {
            let result = try ferry(arguments, in: scratch.path)
            #expect(result.status == 65, "\(arguments): \(result.errors)")
            #expect(result.errors.contains("loop") && result.errors.contains("Z_ENT 1"), "\(arguments): \(result.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.zst")))
    }

    @Test func aTargetWithAnUnknownExtensionIsRefused() throws {
        let scratch = try Scratch()
        for target in ["x.tar.xz", "x.tar", "x.zst", "x.tar.bz2", "notes.txt", "backup"] {
            let result = try ferry(["copy", Self.cars, target], in: scratch.path)
            #expect(result.status == 64, "\(target): \(result.errors)")
            #expect(result.errors.contains(".tar.zst") && result.errors.contains(".ferry"), "\(target): \(result.errors)")
            #expect(!FileManager.default.fileExists(atPath: scratch.file(target)), "\(target) was written")
        }
        // An existing local store is written whatever its name; an existing file of another kind is not.
        let first = try ferry(["copy", Self.cars, "a.ferry", "-q"], in: scratch.path)
        #expect(first.status == 0, "\(first.errors)")
        try FileManager.default.moveItem(atPath: scratch.file("a.ferry"), toPath: scratch.file("store.db"))
        let again = try ferry(["copy", Self.cars, "store.db", "--json", "-q"], in: scratch.path)
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains(#""unchanged":"#), "\(again.output)")
        try scratch.write("notes.db", "my notes\n")
        let refused = try ferry(["copy", Self.cars, "notes.db"], in: scratch.path)
        #expect(refused.status == 64 && refused.errors.contains("not a Ferry local store"), "\(refused.errors)")
        #expect(try scratch.read("notes.db") == Data("my notes\n".utf8))
    }
}
