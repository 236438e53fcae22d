import ArgumentParser
import FerryBundle
import FerryCore
import FerryJSON

/// `ferry unpack`: extract a bundle into a new directory, verified.
struct Unpack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Extract a bundle into a new directory (a BagIt bag), checking everything first.",
        discussion: """
            The directory must not exist. Entries are written under a temporary name and moved into place only \
            when all of them passed their checks; nothing is ever written outside the directory.

            Examples:
              ferry unpack cars.tar.gz restored/
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle archive.")
    var bundle: String

    @Argument(help: "The directory to create.")
    var directory: String

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "unpack") { console in
            let reader = try BundleReader(path: bundle)
            let total = reader.payloadBytes
            let meter = ProgressMeter(console: console, label: "extracting \(bundle)", unit: nil, total: total)
            try reader.extract(to: directory) { done in meter.update(done) }
            let manifest = reader.manifest
            console.message(
                "summary",
                [
                    "bundle": .string(bundle), "directory": .string(directory), "records": .integer(Int64(manifest.recordCount)),
                    "deletions": .integer(Int64(manifest.deletionCount)), "assets": .integer(Int64(manifest.assetCount)),
                    "payload_bytes": .integer(total),
                ])
            if !console.quiet {
                console.line(
                    "unpacked \(bundle) into \(directory): \(Formatting.count(manifest.recordCount, "record")), "
                        + "\(Formatting.count(manifest.deletionCount, "deletion")), \(Formatting.count(manifest.assetCount, "asset"))")
            }
            return ExitCodes.success
        }
    }
}
