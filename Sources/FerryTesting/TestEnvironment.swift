import Foundation

/// Where tests find the shared fixtures, the built `ferry` binary and helper programs.
public enum TestEnvironment {
    /// The package's root directory.
    public static let packageRoot: String = {
        // This file is Sources/FerryTesting/TestEnvironment.swift.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()

    /// `../shared` beside the package (or `$FERRY_SHARED`), if present.
    public static var sharedDirectory: String? {
        let path = ProcessInfo.processInfo.environment["FERRY_SHARED"] ?? "\(packageRoot)/../shared"
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        return FileManager.default.fileExists(atPath: standardized) ? standardized : nil
    }

    /// Whether this is a CI run (where missing fixtures are an error, not a skip).
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    /// The PostgreSQL server the tests use (`$FERRY_TEST_PG_URL`: `Scripts/test` starts one, or a developer's own),
    /// if any.
    public static var postgresURL: String? {
        ProcessInfo.processInfo.environment["FERRY_TEST_PG_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The PostgreSQL server's URL for a test that needs one; `nil`, with the reason printed, where there is none, and
    /// an error in CI, where `Scripts/test` starts one.
    public static func postgresURLForTest() throws -> String? {
        if let url = postgresURL { return url }
        if isCI { throw PostgresServerMissing() }
        print("skipped: no FERRY_TEST_PG_URL (run Scripts/test, which starts a PostgreSQL server, or point it at yours)")
        return nil
    }

    /// No PostgreSQL server where the tests need one.
    public struct PostgresServerMissing: Error, CustomStringConvertible {
        public init() {}
        public var description: String { "FERRY_TEST_PG_URL is not set: Scripts/test starts the server in CI" }
    }

    /// The `ferry` executable built beside the test bundle (or `$FERRY_BINARY`).
    public static var ferryBinary: String {
        if let explicit = ProcessInfo.processInfo.environment["FERRY_BINARY"] { return explicit }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("ferry").path,
            "\(packageRoot)/.build/debug/ferry",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
    }
}
