import FerryBundle
import FerryCore
import FerryRecords
import FerryTransfer
import Foundation
import Logging

/// `ferry copy` into a bundle: the source's changes through a bundle writer.
struct CopyToBundle {
    var source: any ChangeSource
    var sourcePath: String
    var target: String
    var format: ArchiveFormat?
    var rejectFile: String?
    var createdAt: TimeArgument?
    /// When the copy began reading the source, if it is a database: the bundle's time unless one is given.
    var databaseReadAt: Date?
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
        // A time known before the copy lets the writer put assets in the archive while records are still read.
        let knownTime = try CreationTime.known(flag: createdAt, database: databaseReadAt)
        options.createdAt = knownTime
        let rejects = try RejectLog(path: dryRun ? nil : rejectFile, console: console, files: files)
        var warnings = WarningLog(console: console)
        let meter = ProgressMeter(
            console: console, label: "reading \(sourcePath)", unit: "changes", total: source.expectedChanges.map(Int64.init))
        let events = BundleCopier.Events(
            warning: { about, text in warnings.add(about.map { "\($0): \(text)" } ?? text) },
            rejected: { origin, change, problems in
                try rejects.reject(source: sourcePath, origin: origin, change: change, problems: problems)
            },
            progress: { read in meter.update(Int64(read)) },
            staged: { assets, bytes in
                console.logger.info("extracted \(Formatting.count(assets, "asset")) (\(Formatting.bytes(bytes))) of \(sourcePath) to scratch")
            })
        let (summary, counts) = try BundleCopier(source: source, path: target, options: options).run(
            events, createdAt: { try knownTime ?? CreationTime.resolve(flag: createdAt, inputs: [sourcePath]) },
            progress: console.bundleProgress(target))
        try rejects.commit()
        var tally = BundleTally()
        tally.read = counts.read
        for (key, count) in counts.rejected { tally.rejected[BundleTally.Key(type: key.recordType, zone: key.zoneID)] = count }
        try BundleReport(output: target, dryRun: dryRun, rejectFile: rejectFile, verb: dryRun ? "would copy" : "copied", started: started)
            .print(summary, tally: tally, rejected: rejects.count, warnings: warnings.count, console: console)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }
}
