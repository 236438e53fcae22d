import FerryBackend
import FerryCore
import FerryJSON
import FerryRecords
import FerryTransfer
import Foundation
import Logging
import Synchronization

/// How many changes a copy has committed, read by the interruption handler on another thread.
final class CommittedCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func set(_ value: Int) { count.store(value, ordering: .relaxed) }

    /// Runs `body` with what an interruption (Ctrl-C) says meanwhile: how many changes are committed to `target`
    /// (`kept`: which keeps them, said in so many words) and that the same command resumes, or that a dry run wrote
    /// nothing.
    static func noted<Result>(target: String, kept: Bool, dryRun: Bool, _ body: (CommittedCount) async throws -> Result)
        async rethrows -> Result
    {
        let committed = CommittedCount()
        let keeps = kept ? ", which is kept" : ""
        CommandRunner.interruptionNote.withLock {
            $0 = {
                dryRun
                    ? "nothing was written (a dry run)"
                    : "\(committed.value) of the source's changes are committed to \(target)\(keeps); run the same command again to resume "
                        + "after them"
            }
        }
        defer { CommandRunner.interruptionNote.withLock { $0 = nil } }
        return try await body(committed)
    }
}

/// `ferry copy` into a backend (a local store, PostgreSQL): the copy engine, its per-record outcomes, the reject
/// file and the summary.
struct CopyToBackend {
    var source: any ChangeSource
    var sourcePath: String
    /// The target as shown (a path, or a URL without its password).
    var target: String
    var options: RecordCopier.Options
    var rejectFile: String?
    /// The copy's inputs and outputs, which the reject file may not replace.
    var files: RunFiles

    /// Runs the copy into an open backend; `described` says what it is, for the log.
    func run(
        into backend: any RecordStore, journal: any CheckpointJournal, described: String, committed: CommittedCount, console: Console,
        started: Date
    ) async throws -> Int32 {
        var options = self.options
        let logger = console.logger
        logger.info(
            "target: \(target), \(described); batches of \(options.batchSize.map(String.init) ?? "the backend's") changes or \(Formatting.bytes(Int64(options.batchBytes))); on conflict \(options.policy.description)"
        )
        let meter = ProgressMeter(
            console: console, label: "copying \(sourcePath) → \(target)", unit: "changes", total: source.expectedChanges.map(Int64.init))
        options.onRead = { read in meter.update(read) }
        options.onCommit = { changes, checkpoint in
            logger.debug("committed a batch of \(changes) changes; checkpoint: \(checkpoint) of the source's changes done")
        }
        let copier = RecordCopier(source: source, target: backend, journal: journal, options: options)
        let resumeFrom = options.dryRun ? 0 : try await copier.resumePoint()
        if resumeFrom > 0 { console.note("resuming an interrupted copy: \(Formatting.count(Int(resumeFrom), "change")) already applied") }
        let rejects = try RejectLog(path: options.dryRun ? nil : rejectFile, console: console, files: files)
        var warnings = WarningLog(console: console)
        var seen = 0
        let tally = try await copier.run { item, outcome in
            seen += 1
            committed.set(seen)
            let change = item.change
            for problem in item.problems { warnings.add("\(item.shown): \(problem)") }
            if case .rejected(let code, let reason) = outcome {
                try rejects.reject(source: sourcePath, origin: item.origin, change: change, code: code, reason: reason)
            } else if outcome != .resumed, console.json {
                var message: JSONObject = [
                    "outcome": .string(outcome.name), "record_type": .string(change.recordType), "record_name": .string(change.recordName),
                    "zone": .string(change.zoneID.description), "origin": .string(item.origin),
                ]
                if case .kept(let reason) = outcome { message["reason"] = .string(reason) }
                console.message("record", message)
            }
        }
        for finding in source.findings { warnings.add(finding) }
        for (record, outcome) in tally.patched {
            if case .rejected(let code, let reason) = outcome {
                try rejects.reject(source: sourcePath, origin: "deferred", change: .record(record), code: code, reason: reason)
            } else {
                console.message(
                    "record",
                    [
                        "outcome": "patched", "record_type": .string(record.recordType), "record_name": .string(record.recordName),
                        "zone": .string(record.zoneID.description),
                    ])
            }
        }
        if !tally.patched.isEmpty {
            console.note(
                "\(Formatting.count(tally.patched.count, "record")) pointed with VALIDATE at records written after them (a reference cycle): "
                    + "written without those references first, completed at the end")
        }
        try rejects.commit()
        try report(tally, rejected: rejects.count, warnings: warnings.count, resumed: resumeFrom, console: console, started: started)
        return rejects.count > 0 ? ExitCodes.rejected : ExitCodes.success
    }

    /// Prints the summary, row by row (a copy may count hundreds of thousands of record types and zones).
    private func report(_ tally: TransferTally, rejected: Int, warnings: Int, resumed: Int64, console: Console, started: Date) throws {
        let total = tally.total
        func counts(_ row: TransferTally.Row) -> JSONObject {
            [
                "read": .integer(Int64(row.read)), "created": .integer(Int64(row.created)), "updated": .integer(Int64(row.updated)),
                "unchanged": .integer(Int64(row.unchanged)), "deleted": .integer(Int64(row.deleted)), "absent": .integer(Int64(row.absent)),
                "kept": .integer(Int64(row.kept)),
                "rejected": .integer(Int64(row.rejected)), "resumed": .integer(Int64(row.resumed)),
            ]
        }
        var summary = counts(total)
        summary["dry_run"] = .bool(options.dryRun)
        summary["target"] = .string(target)
        summary["source"] = .string(sourcePath)
        summary["on_conflict"] = .string(options.policy.description)
        summary["assets"] = .integer(Int64(tally.assets))
        summary["asset_bytes"] = .integer(tally.assetBytes)
        summary["zones_created"] = .integer(Int64(tally.zonesCreated))
        summary["patched"] = .integer(Int64(tally.patched.count))
        summary["warnings"] = .integer(Int64(warnings))
        summary["seconds"] = .number((Date().timeIntervalSince(started) * 1000).rounded() / 1000)
        try console.message("summary", summary, streaming: "types") { add in
            try tally.forEachRow { type, zone, row in
                var object = counts(row)
                object["record_type"] = .string(type)
                object["zone"] = .string(zone)
                try add(.object(object))
            }
        }
        guard !console.quiet else { return }
        let verb = options.dryRun ? "would copy" : "copied"
        console.line(
            "\(verb) \(Formatting.count(total.read, "change")) from \(sourcePath) into \(target): \(total.created) created, "
                + "\(total.updated) updated, \(total.unchanged) unchanged, \(total.deleted) deleted"
                + (total.absent > 0 ? " (\(total.absent) more already absent)" : "")
                + ", \(total.kept) kept, \(total.rejected) rejected; "
                + "\(Formatting.count(tally.assets, "new asset")) (\(Formatting.bytes(tally.assetBytes)))")
        console.line("")
        var header = ["RECORD TYPE", "ZONE", "READ", "CREATED", "UPDATED", "UNCHANGED", "DELETED", "ABSENT", "KEPT", "REJECTED"]
        if resumed > 0 { header.append("RESUMED") }
        try Formatting.table(
            header: header, rightAligned: Set(2..<header.count),
            rows: { add in
                try tally.forEachRow { type, zone, row in
                    var line = [
                        type, zone, "\(row.read)", "\(row.created)", "\(row.updated)", "\(row.unchanged)", "\(row.deleted)", "\(row.absent)",
                        "\(row.kept)", "\(row.rejected)",
                    ]
                    if resumed > 0 { line.append("\(row.resumed)") }
                    try add(line)
                }
            }, line: console.line)
        if rejected > 0 {
            console.line("")
            console.line("\(Formatting.count(rejected, "change")) rejected" + (rejectFile.map { "; see \($0)" } ?? "; list them with --reject-file"))
        }
    }
}
