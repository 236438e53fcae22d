import Foundation

/// Reads `FERRY_*` and other environment variables.
enum Environment {
    /// The value of a variable, if set and not empty.
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}
