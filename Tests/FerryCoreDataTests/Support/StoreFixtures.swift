import FerryCore
import FerryTesting
import Foundation
import Testing

/// The Core Data stores in `../shared/fixtures`, and copies of them for the `sqlite3` shell.
enum StoreFixtures {
    /// Every store, relative to the fixtures folder.
    static let stores = SharedFixtures.coreDataStores

    /// Stores written before the model cache existed.
    static let withoutModelCache: Set<String> = [
        "fruitsamples-iPhoneCoreDataRecipes/Recipes.sqlite", "gilpa-iphone_sqlite_test/CoreDataBooks.sqlite",
    ]

    /// The absolute path of a store, or `nil` (with a printed reason) when `../shared` is absent.
    static func path(_ relative: String) -> String? { SharedFixtures.path(relative) }

    /// Copies a store with its `-wal`, `-shm` and support folder into a scratch folder; the copy is what the
    /// `sqlite3` shell opens, so the fixture is never opened read-write.
    static func copy(_ store: String, into scratch: Scratch) throws -> String {
        let url = URL(fileURLWithPath: store)
        let target = scratch.file(url.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store + suffix) {
            try FileManager.default.copyItem(atPath: store + suffix, toPath: target + suffix)
        }
        let support = ".\(url.deletingPathExtension().lastPathComponent)_SUPPORT"
        let supportPath = url.deletingLastPathComponent().appendingPathComponent(support).path
        if FileManager.default.fileExists(atPath: supportPath) {
            try FileManager.default.copyItem(atPath: supportPath, toPath: scratch.file(support))
        }
        return target
    }
}
