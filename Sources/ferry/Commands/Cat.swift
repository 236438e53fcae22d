import ArgumentParser
import FerryBundle
import FerryCore

/// `ferry cat`: a bundle's records as NDJSON on stdout.
struct Cat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a bundle's records (and deletions) as NDJSON, in canonical CloudKit JSON.",
        discussion: """
            Records come parents first, then deletions. Each file's checksum is checked as it streams; if one does \
            not match, ferry stops with exit 65 and the output so far must be discarded.

            Examples:
              ferry cat cars.tar.gz --type Note --zone CarZone
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle (an archive, or an extracted bag directory).")
    var bundle: String

    @Option(name: .customLong("type"), help: "Only records of this type (repeatable).")
    var types: [String] = []

    @Option(name: .customLong("zone"), help: "Only records in this zone, by name or name@owner (repeatable).")
    var zones: [String] = []

    @Flag(help: "Leave deletions out.")
    var noDeletions = false

    func run() async throws {
        try CommandRunner.run(global, label: "cat") { console in
            let reader = try BundleReader(path: bundle)
            let selection = BundleReader.Selection(
                recordTypes: types.isEmpty ? nil : Set(types), zoneNames: zones.isEmpty ? nil : Set(zones),
                includeDeletions: !noDeletions)
            let newline = [UInt8(ascii: "\n")]
            try reader.forEachChangeLine(selection) { line in
                try console.raw(line)
                try newline.withUnsafeBytes { try console.raw($0) }
            }
            console.flush()
            return ExitCodes.success
        }
    }
}
