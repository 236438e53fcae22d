import ArgumentParser
import FerryCore
import FerryJSON
import FerryLocalStore

/// `ferry vacuum`: drops what a local store holds that no record uses.
struct Vacuum: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove the assets no record of a local store uses (and, with --compact, give the space back).",
        discussion: """
            A copy that stored a source's assets and then failed before writing the records that use them removes \
            them itself; stores written by older versions, or left by a crash at that moment, may hold such assets. \
            `ferry verify STORE` counts them. --compact rewrites the store without its free pages (SQLite's VACUUM), \
            which needs as much free disk as the store and holds the store's write lock meanwhile.

            Examples:
              ferry vacuum app.ferry
              ferry vacuum app.ferry --compact
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The local store.")
    var store: String

    @Flag(help: "Also rewrite the store's file so that freed space goes back to the filesystem.")
    var compact = false

    @Option(help: "Directory for scratch files (default: $TMPDIR).")
    var tempDir: String?

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "vacuum") { console in
            let opened = try LocalStore(path: store)
            let result = try opened.vacuum(compact: compact, temporaryDirectory: tempDir)
            try opened.close()
            console.message(
                "summary",
                [
                    "store": .string(store), "assets_removed": .integer(Int64(result.assets)), "asset_bytes": .integer(result.assetBytes),
                    "size_before": .integer(result.sizeBefore), "size_after": .integer(result.sizeAfter), "compacted": .bool(compact),
                ])
            if !console.quiet {
                console.line(
                    "\(store): removed \(Formatting.count(result.assets, "unreferenced asset")) (\(Formatting.bytes(result.assetBytes)))"
                        + (compact ? "; \(Formatting.bytes(result.sizeBefore)) → \(Formatting.bytes(result.sizeAfter))" : ""))
            }
            return ExitCodes.success
        }
    }
}
