import ArgumentParser

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
            """,
        version: version,
        subcommands: [
            Copy.self, Diff.self, Plan.self, Pack.self, List.self, Verify.self, Cat.self, Unpack.self, Convert.self, Inspect.self, Dump.self,
        ]
    )
}
