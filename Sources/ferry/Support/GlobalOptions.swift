import ArgumentParser
import Logging

/// Flags every verb accepts.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Write results as JSON Lines with a message_type field.")
    var json = false

    @Flag(name: [.short, .long], help: "Print only errors.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Print more detail; repeat for debug logs.")
    var verbose: Int

    /// The log level: from the flags, else `FERRY_LOG_LEVEL`, else notice.
    var logLevel: Logger.Level {
        if quiet { return .error }
        if verbose >= 2 { return .debug }
        if verbose == 1 { return .info }
        if let text = Environment.value("FERRY_LOG_LEVEL"), let level = Logger.Level(rawValue: text.lowercased()) {
            return level
        }
        return .notice
    }

    func validate() throws {
        if quiet && verbose > 0 { throw ValidationError("--quiet and --verbose cannot be combined") }
        if let text = Environment.value("FERRY_LOG_LEVEL"), !text.isEmpty, Logger.Level(rawValue: text.lowercased()) == nil {
            throw ValidationError(
                "FERRY_LOG_LEVEL=\(text) (from the environment) is no log level; use one of "
                    + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
        }
    }
}
