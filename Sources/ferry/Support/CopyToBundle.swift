import FerryBundle
import FerryCore
import FerryRecords
import FerryTransfer
import Foundation

/// `ferry copy` into a bundle: the source's changes through a bundle writer.
struct CopyToBundle {
    var source: any ChangeSource
    var sourcePath: String
    var target: String
    var format: ArchiveFormat?
    var rejectFile: String?
    var createdAt: String?
    var tempDir: String?
    var zstdWorkers: Int
    var dryRun: Bool
    /// The copy's inputs and outputs, which neither the bundle nor the reject file may replace.
    var files: RunFiles

    func run(console: Console, started: Date) throws -> Int32 {
        var options = BundleWriter.Options(source: .init(kind: source.kind, description: source.description))
        options.format = format
        options.temporaryDirectory = tempDir
        options.softwareAgent = "ferry \(Ferry.version)"
        options.zstdWorkers = zstdWorkers
        options.dryRun = dryRun
        options.files = files
        // A bundle's assets follow its records: extracted first, so the writer has them as the records come.
        let staged = try source.stageAssets(temporaryDirectory: tempDir)
        if staged.assets > 0 {
            console.logger.info(
                "extracted \(Formatting.count(staged.assets, "asset")) (\(Formatting.bytes(staged.bytes))) of \(sourcePath) to scratch")
        }
        let writer = try BundleWriter(path: target, options: options, assets: source.assets)
        let rejects = try RejectLog(path: dryRun ? nil : rejectFile, console: console, files: files)
        var tally = BundleTally()
        var warnings = WarningLog(console: console)
        let meter = ProgressMeter(
            console: console, label: "reading \(sourcePath)", unit: "changes", total: source.expectedChanges.map(Int64.init))
        try source.forEachChange { item in
            let change = item.change
            for problem in item.problems { warnings.add("\(item.shown): \(problem)") }
            switch try writer.add(change) {
            case .accepted(let found):
                tally.count(change, rejected: false)
                for warning in found { warnings.add("\(item.shown): \(warning)") }
            case .rejected(let problems):
                tally.count(change, rejected: true)
                try rejects.reject(source: sourcePath, origin: item.origin, change: change, problems: problems)
            }
            meter.update(Int64(tally.read))
        }
        for finding in source.findings { warnings.add(finding) }
        let creation = try CreationTime.resolve(flag: createdAt, inputs: [sourcePath])
        let summary = try writer.finish(
            createdAt: creation, progress: console.bundleProgress(target),
            found: { found in
                // Repeated names and DELETE_SELF overflows are only known at the end; the writer numbers the changes.
                if found.problem.severity == .error {
                    tally.reject(found.change)
                    try rejects.reject(source: sourcePath, origin: "change \(found.origin)", change: found.change, problems: [found.problem])
                } else {
                    warnings.add("change \(found.origin) \(found.change.recordType) \(found.change.recordName): \(found.problem)")
                }
            })
        try rejects.commit()
        try BundleReport(output: target, dryRun: dryRun, rejectFile: rejectFile, verb: dryRun ? "would copy" : "copied", started: started)
            .print(summary, tally: tally, rejected: rejects.count, warnings: warnings.count, console: console)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }
}
