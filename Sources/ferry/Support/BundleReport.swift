import FerryBundle
import FerryCore
import FerryJSON
import FerryRecords
import Foundation

/// The end-of-run report of a command that writes a bundle (`pack`, `copy`).
struct BundleReport {
    var output: String
    var dryRun: Bool
    var rejectFile: String?
    /// The past-tense verb of the summary line, such as `packed` or `would copy`.
    var verb: String
    var started: Date

    /// Prints the summary: a JSON `summary` message, and for people a line and a table per record type and zone.
    ///
    /// The bundle's files are read from its manifest as they are printed, never held (there may be hundreds of
    /// thousands).
    func print(_ summary: BundleSummary, tally: BundleTally, rejected: Int, warnings: Int, console: Console) throws {
        let manifest = summary.manifest
        let bundleBytes = dryRun ? nil : (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int64) ?? nil
        /// Each file of the bundle, with its type and zone's key in the tally and the changes rejected from them.
        func forEachFile(_ body: (BundleManifest.RecordFile, BundleTally.Key, Int) throws -> Void) throws {
            try manifest.files.forEach { file in
                let key = BundleTally.Key(type: file.kind == .records ? file.recordType ?? "" : nil, zone: file.zoneID)
                try body(file, key, tally.rejected[key] ?? 0)
            }
        }
        /// The rows of the table, file by file, then the types and zones whose every change was rejected.
        func rows(_ add: ([String]) throws -> Void) throws {
            var reported: Set<BundleTally.Key> = []
            try forEachFile { file, key, rejected in
                if tally.rejected[key] != nil { reported.insert(key) }
                let label = file.kind == .records ? file.recordType ?? "" : "(deletions)"
                try add([label, file.zoneID.description, "\(file.count)", "\(rejected)"])
            }
            for (key, count) in tally.rejected.sorted(by: { "\($0.key)" < "\($1.key)" }) where !reported.contains(key) {
                try add([key.type ?? "(deletions)", key.zone.description, "0", "\(count)"])
            }
        }
        try console.message(
            "summary",
            [
                "dry_run": .bool(dryRun), "bundle": .string(output), "format": .string(summary.format.rawValue),
                "records": .integer(Int64(manifest.recordCount)), "deletions": .integer(Int64(manifest.deletionCount)),
                "rejected": .integer(Int64(rejected)), "warnings": .integer(Int64(warnings)),
                "assets": .integer(Int64(manifest.assetCount)), "asset_bytes": .integer(manifest.assetBytes),
                "payload_bytes": .integer(summary.payloadBytes), "bundle_bytes": bundleBytes.map { .integer($0) } ?? .null,
                "record_type_order": .array(manifest.recordTypeOrder.map { .string($0) }),
                "dangling_references": .integer(Int64(summary.danglingReferences)),
                "seconds": .number((Date().timeIntervalSince(started) * 1000).rounded() / 1000),
            ],
            streaming: "files"
        ) { add in
            try forEachFile { file, _, rejected in
                try add([
                    "kind": .string(file.kind.rawValue), "record_type": file.recordType.map { .string($0) } ?? .null,
                    "zone": .string(file.zoneID.description), "count": .integer(Int64(file.count)),
                    "rejected": .integer(Int64(rejected)),
                ])
            }
        }
        guard !console.quiet else { return }
        let size = bundleBytes.map { ", \(Formatting.bytes($0))" } ?? ""
        console.line(
            "\(verb) \(Formatting.count(manifest.recordCount, "record")), \(Formatting.count(manifest.deletionCount, "deletion")) "
                + "and \(Formatting.count(manifest.assetCount, "asset")) (\(Formatting.bytes(manifest.assetBytes))) "
                + "into \(output) (\(summary.format)\(size))")
        console.line("")
        try Formatting.table(
            header: ["RECORD TYPE", "ZONE", "RECORDS", "REJECTED"], rightAligned: [2, 3],
            rows: { add in
                try rows(add)
                if tally.unreadable > 0 { try add(["(unreadable lines)", "", "0", "\(tally.unreadable)"]) }
            }, line: console.line)
        if !manifest.dependencyCycles.isEmpty {
            console.line("")
            console.line("reference cycles between types: \(manifest.dependencyCycles.map { $0.joined(separator: " ↔ ") }.joined(separator: "; "))")
        }
        if rejected > 0 {
            console.line("")
            console.line("\(Formatting.count(rejected, "record")) rejected\(rejectFile.map { dryRun ? "" : ": see \($0)" } ?? "")")
        }
    }
}

/// Per type and zone counts for a bundle summary.
struct BundleTally {
    struct Key: Hashable, CustomStringConvertible {
        var type: String?
        var zone: ZoneID
        var description: String { "\(type ?? "")\u{0}\(zone)" }
    }

    var rejected: [Key: Int] = [:]
    var read = 0
    var unreadable = 0

    init() {}

    /// The counts of a pack.
    init(_ counts: BundlePacker.Counts) {
        read = counts.read
        unreadable = counts.unreadable
        for (key, count) in counts.rejected { rejected[Key(type: key.recordType, zone: key.zoneID)] = count }
    }

    mutating func count(_ change: RecordChange, rejected isRejected: Bool) {
        read += 1
        if isRejected { reject(change) }
    }

    /// Counts a change as rejected after it was counted as accepted (a duplicate found when the bundle was finished).
    mutating func reject(_ change: RecordChange) {
        let key = Key(type: change.isDeletion ? nil : change.recordType, zone: change.zoneID)
        rejected[key, default: 0] += 1
    }
}

extension Console {
    /// A bundle writer's progress, shown as `writing OUTPUT: … of …`.
    func bundleProgress(_ output: String) -> (BundleWriter.Progress) -> Void {
        { progress in
            if case .writing(let done, let total) = progress {
                self.progress("writing \(output): \(Formatting.bytes(done)) of \(Formatting.bytes(total))")
            }
        }
    }
}
