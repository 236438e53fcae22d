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
