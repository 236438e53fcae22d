import ArgumentParser
import Foundation

/// The `ferry` command: moves app data between Apple-style stores, archive bundles and sync backends.
@main
struct Ferry: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Move app data between Core Data stores, keyed archives, bundles and sync backends.",
        discussion: """
            Results go to standard output (JSON Lines with --json), logs and progress to standard error.

            Exit codes: 0 ok; 1 finished, but records were rejected; 64 usage; 65 bad input data; 66 input missing; \
            69 backend unavailable; 70 internal error; 73 cannot create output; 75 temporary failure; \
            77 permission denied; 78 configuration error; 130 interrupted (143 on SIGTERM). \
            Treat any other non-zero code as a failure.

            Environment: FERRY_PRESET (the preset when --preset and --mapping are not given), FERRY_LOG_LEVEL \
            (trace, debug, info, notice, warning, error; -v and -q win), FERRY_LOCAL_STORE (the default local store), \
            SOURCE_DATE_EPOCH (a bundle's creation time when --created-at is not given), TMPDIR (scratch files when \
            --temp-dir is not given).

            Shell completions: ferry --generate-completion-script bash (or zsh, fish) > FILE, then source FILE \
            (bash), or put it where your shell looks for completions.
            """,
        version: version,
        subcommands: [
            Copy.self, Diff.self, Plan.self, Pack.self, List.self, Verify.self, Cat.self, Unpack.self, Convert.self, Inspect.self, Dump.self,
            Vacuum.self, PgViews.self,
        ]
    )

    /// `ferry` alone: the help, on standard error, and the usage exit code (a script that forgot its verb fails).
    func run() async throws {
        FileHandle.standardError.write(Data((Self.helpMessage() + "\n").utf8))
        throw ExitCode(ExitCodes.usage)
    }

    /// Parses and runs, refusing `ferry help VERB` for a verb that does not exist (exit 64), which the parser would
    /// answer with the general help and success.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        ArgumentScrubber.hidePasswords()
        if arguments.count >= 2, arguments[0] == "help", !arguments[1].hasPrefix("-") {
            let verbs = configuration.subcommands.map { $0.configuration.commandName ?? String(describing: $0).lowercased() }
            if !verbs.contains(arguments[1]) {
                FileHandle.standardError.write(
                    Data("ferry: error: no command \(arguments[1]); the commands are \(verbs.joined(separator: ", "))\n".utf8))
                Foundation.exit(ExitCodes.usage)
            }
        }
        do {
            var command = try await asyncParseAsRoot(nil)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // Help and --version go to standard output; a command's own failure was reported by CommandRunner.
            let code = exitCode(for: error)
            if code == .success || error is ExitCode { exit(withError: error) }
            // The parser's errors with the prefix every other error has.
            var text = fullMessage(for: error)
            if text.hasPrefix("Error: ") { text = "ferry: error: " + text.dropFirst("Error: ".count) }
            FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
