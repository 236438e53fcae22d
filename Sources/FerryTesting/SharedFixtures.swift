import Foundation
import Testing

/// The real files in `../shared/fixtures`: present on developer machines and always in CI.
public enum SharedFixtures {
    /// The fixtures folder, or `nil` (with a printed reason) when `../shared` is absent; in CI its absence is a failure.
    public static var directory: String? {
        guard let shared = TestEnvironment.sharedDirectory else {
            if TestEnvironment.isCI { Issue.record("../shared/fixtures is missing; CI must have it beside the project") }
            print("skipping: ../shared is not beside the project")
            return nil
        }
        return "\(shared)/fixtures"
    }

    /// A path inside the fixtures folder, or `nil` when it is absent.
    public static func path(_ relative: String) -> String? { directory.map { "\($0)/\(relative)" } }

    /// A CloudKit Web Services example (`../shared/docs/cloudkit-examples/NAME`), or `nil` when `../shared` is absent.
    public static func cloudKitExample(_ name: String) -> String? {
        directory.map { URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("docs/cloudkit-examples/\(name)").path }
    }

    /// The standard bench folder (`../shared/bench`), or `nil` when absent.
    public static var benchDirectory: String? { TestEnvironment.sharedDirectory.map { "\($0)/bench" } }

    /// Every Core Data store among the fixtures, relative to the fixtures folder.
    public static let coreDataStores = [
        "alemar11-CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite",
        "alemar11-CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite",
        "alemar11-CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite",
        "alemar11-CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
        "fruitsamples-iPhoneCoreDataRecipes/Recipes.sqlite",
        "gilpa-iphone_sqlite_test/CoreDataBooks.sqlite",
        "wibosco-CoreDataMigration-Example/sqlite/CoreDataMigration_Example_1.sqlite",
        "wibosco-CoreDataMigration-Example/sqlite/CoreDataMigration_Example_2.sqlite",
        "wibosco-CoreDataMigration-Example/sqlite/CoreDataMigration_Example_3.sqlite",
        "wibosco-CoreDataMigration-Example/sqlite/CoreDataMigration_Example_WAL.sqlite",
    ]
}
