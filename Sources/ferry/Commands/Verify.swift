import ArgumentParser
import FerryBundle
import FerryCore

/// `ferry verify`: a full integrity check of a bundle.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a bundle completely: checksums, sizes, entry safety, and every record.",
        discussion: "Exits 0 when the bundle is intact and 65 when anything is wrong, listing what.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle (an archive, or an extracted bag directory).")
    var bundle: String

    @Flag(help: "Check entries, sizes and checksums only (what a BagIt validator checks); do not decode the records.")
    var checksumsOnly = false

    @Option(
        help: "Directory for scratch files: record identities, references and asset lists of bundles too large to hold in memory (default: $TMPDIR).")
    var tempDir: String?

    func run() async throws {
        try CommandRunner.run(global, label: "verify") { console in
            let reader = try BundleReader(path: bundle, temporaryDirectory: tempDir)
            let total = reader.payloadBytes
            // Problems are printed as they are found: all of them with --json, the first 100 otherwise.
            var printed = 0
            let report = try reader.verify(
                checksumsOnly: checksumsOnly, temporaryDirectory: tempDir,
                progress: { done in console.progress("verifying \(bundle): \(Formatting.bytes(done)) of \(Formatting.bytes(total))") },
                onIssue: { issue in
                    console.message("error", ["error": .string(issue.codeName), "message": .string(issue.message)])
                    guard !console.json, printed < VerificationReport.maxIssues else { return }
                    printed += 1
                    console.errorStream("ferry: \(issue.message)")
                })
            console.clearProgress()
            if report.issueCount > printed, !console.json {
                console.errorStream("ferry: … and \(report.issueCount - printed) more problems (--json lists them all)")
            }
            for warning in report.warnings { console.warning(warning) }
            console.message(
                "summary",
                [
                    "bundle": .string(bundle), "valid": .bool(report.isValid), "checksums_only": .bool(checksumsOnly),
                    "problems": .integer(Int64(report.issueCount)),
                    "records": .integer(Int64(report.recordsChecked)), "deletions": .integer(Int64(report.deletionsChecked)),
                    "assets": .integer(Int64(report.assetsChecked)), "payload_bytes": .integer(report.bytesChecked),
                ])
            let counts =
                "\(Formatting.count(report.recordsChecked, "record")), \(Formatting.count(report.deletionsChecked, "deletion")), "
                + "\(Formatting.count(report.assetsChecked, "asset")), \(Formatting.bytes(report.bytesChecked))"
            if report.isValid {
                if !console.quiet { console.line("\(bundle): OK (\(counts))") }
                return ExitCodes.success
            }
            console.line("\(bundle): DAMAGED: \(Formatting.count(report.issueCount, "problem")) (\(counts))")
            return ExitCodes.code(for: .dataError)
        }
    }
}
