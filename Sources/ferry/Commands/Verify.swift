import ArgumentParser
import FerryBackend
import FerryBundle
import FerryCore
import FerryJSON
import FerryLocalStore
import FerryTransfer

/// `ferry verify`: a full integrity check of a bundle.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a bundle, a local store or a PostgreSQL database completely: checksums, sizes, every record and asset.",
        discussion: """
            Exits 0 when the bundle or store is intact and 65 when anything is wrong, listing what. A local store gets \
            SQLite's integrity_check, every record checked against the rules a copy applies and against the content \
            digest stored with it, every asset its records use read back and hashed, and a warning for the assets no \
            record uses (ferry vacuum removes them).

            Examples:
              ferry verify cars.tar.gz
              ferry verify --checksums-only cars.tar.gz
              ferry verify app.ferry        # a local store
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle (an archive, or an extracted bag directory), or a local store.")
    var bundle: String

    @Flag(help: "Check entries, sizes and checksums only (what a BagIt validator checks); do not decode the records.")
    var checksumsOnly = false

    @Option(
        help: "Directory for scratch files: record identities, references and asset lists of bundles too large to hold in memory (default: $TMPDIR).")
    var tempDir: String?

    func run() async throws {
        try await CommandRunner.run(global, label: "verify") { console in
            switch try? Endpoint.source(bundle) {
            case .localStore(let path)?: return try await verifyLocalStore(path, console: console)
            case .postgres(let url)?:
                return try await verifyBackend(try await PostgresOpener.open(url, console: console, migrate: false), console: console)
            default: break
            }
            let reader = try BundleReader(path: bundle, temporaryDirectory: tempDir)
            let total = reader.payloadBytes
            let meter = ProgressMeter(console: console, label: "verifying \(bundle)", unit: nil, total: total)
            // Problems are printed as they are found: all of them with --json, the first 100 otherwise.
            var printed = 0
            let report = try reader.verify(
                checksumsOnly: checksumsOnly, temporaryDirectory: tempDir,
                progress: { done in meter.update(done) },
                onIssue: { issue in
                    console.message("error", ["error": .string(issue.codeName), "message": .string(issue.message)])
                    guard !console.json, printed < VerificationReport.maxIssues else { return }
                    printed += 1
                    console.errorStream("ferry: error: \(issue.message)")
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

    /// A backend through the contract: every record re-validated and checked against its stored digest, every asset
    /// read back and hashed.
    private func verifyBackend(_ store: any RecordStore, console: Console) async throws -> Int32 {
        var problems = 0
        var printed = 0
        let meter = ProgressMeter(console: console, label: "verifying \(store.name)", unit: "records", total: nil)
        let checked = try await StoreVerifier(store: store).verify(
            onProblem: { problem in
                problems += 1
                console.message("error", ["error": .string(problem.code), "message": .string("\(store.name): \(problem.message)")])
                guard !console.json, printed < VerificationReport.maxIssues else { return }
                printed += 1
                console.errorStream("ferry: error: \(store.name): \(problem.message)")
            }, onProgress: { meter.update(Int64($0)) })
        console.clearProgress()
        try await store.close()
        console.message(
            "summary",
            [
                "store": .string(store.name), "valid": .bool(problems == 0), "problems": .integer(Int64(problems)),
                "records": .integer(Int64(checked.records)), "assets": .integer(Int64(checked.assets)), "asset_bytes": .integer(checked.assetBytes),
            ])
        let counts =
            "\(Formatting.count(checked.records, "record")), \(Formatting.count(checked.assets, "asset")), \(Formatting.bytes(checked.assetBytes))"
        guard problems == 0 else {
            console.line("\(store.name): DAMAGED: \(Formatting.count(problems, "problem")) (\(counts))")
            return ExitCodes.code(for: .dataError)
        }
        if !console.quiet { console.line("\(store.name): OK (\(counts))") }
        return ExitCodes.success
    }

    /// A local store: SQLite's check of the file, every record and asset through the backend contract, and the
    /// assets no record uses (which `ferry vacuum` removes).
    private func verifyLocalStore(_ path: String, console: Console) async throws -> Int32 {
        let store = try LocalStore(path: path, readOnly: true)
        defer { try? store.close() }
        var problems = try store.integrityProblems(full: true).map { (code: "local.damaged", message: "\(path): \($0)") }
        var printed = 0
        func report(_ code: String, _ message: String) {
            console.message("error", ["error": .string(code), "message": .string(message)])
            guard !console.json, printed < VerificationReport.maxIssues else { return }
            printed += 1
            console.errorStream("ferry: error: \(message)")
        }
        for problem in problems { report(problem.code, problem.message) }
        let meter = ProgressMeter(console: console, label: "verifying \(path)", unit: "records", total: nil)
        let checked = try await StoreVerifier(store: LocalRecordStore(store)).verify(
            onProblem: { problem in
                problems.append((problem.code, "\(path): \(problem.message)"))
                report(problem.code, "\(path): \(problem.message)")
            }, onProgress: { meter.update(Int64($0)) })
        console.clearProgress()
        if problems.count > printed, !console.json {
            console.errorStream("ferry: … and \(problems.count - printed) more problems (--json lists them all)")
        }
        let unused = try store.unreferencedAssets(temporaryDirectory: tempDir)
        if unused.count > 0 {
            console.warning(
                "\(path): \(Formatting.count(unused.count, "asset")) (\(Formatting.bytes(unused.bytes))) that no record uses; "
                    + "ferry vacuum \(path) removes them")
        }
        console.message(
            "summary",
            [
                "store": .string(path), "valid": .bool(problems.isEmpty), "problems": .integer(Int64(problems.count)),
                "records": .integer(Int64(checked.records)), "assets": .integer(Int64(checked.assets)),
                "asset_bytes": .integer(checked.assetBytes),
                "unreferenced_assets": .integer(Int64(unused.count)), "unreferenced_asset_bytes": .integer(unused.bytes),
            ])
        let counts =
            "\(Formatting.count(checked.records, "record")), \(Formatting.count(checked.assets, "asset")), \(Formatting.bytes(checked.assetBytes))"
        guard problems.isEmpty else {
            console.line("\(path): DAMAGED: \(Formatting.count(problems.count, "problem")) (\(counts))")
            return ExitCodes.code(for: .dataError)
        }
        if !console.quiet {
            console.line("\(path): OK (\(counts)" + (unused.count > 0 ? "; \(Formatting.count(unused.count, "unreferenced asset"))" : "") + ")")
        }
        return ExitCodes.success
    }
}
