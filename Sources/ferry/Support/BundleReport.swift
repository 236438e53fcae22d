import FerryBundle
import FerryCore
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
    func print(_ summary: BundleSummary, tally: BundleTally, rejected: Int, warnings: Int, console: Console) {
        let manifest = summary.manifest
        let bundleBytes = dryRun ? nil : (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int64) ?? nil
        var types: [JSONValue] = []
        var rows = [["RECORD TYPE", "ZONE", "RECORDS", "REJECTED"]]
        for file in manifest.files {
            let key = BundleTally.Key(type: file.kind == .records ? file.recordType ?? "" : nil, zone: file.zoneID)
            let typeName = file.kind == .records ? file.recordType ?? "" : "(deletions)"
            rows.append([typeName, file.zoneID.description, "\(file.count)", "\(tally.rejected[key] ?? 0)"])
            types.append([
                "kind": .string(file.kind.rawValue), "record_type": file.recordType.map { .string($0) } ?? .null,
                "zone": .string(file.zoneID.description), "count": .integer(Int64(file.count)),
                "rejected": .integer(Int64(tally.rejected[key] ?? 0)),
            ])
        }
        for (key, count) in tally.rejected.sorted(by: { "\($0.key)" < "\($1.key)" })
        where !manifest.files.contains(where: { BundleTally.Key(type: $0.kind == .records ? $0.recordType : nil, zone: $0.zoneID) == key }) {
            rows.append([key.type ?? "(deletions)", key.zone.description, "0", "\(count)"])
        }
        if tally.unreadable > 0 { rows.append(["(unreadable lines)", "", "0", "\(tally.unreadable)"]) }
        console.message(
            "summary",
            [
                "dry_run": .bool(dryRun), "bundle": .string(output), "format": .string(summary.format.rawValue),
                "records": .integer(Int64(manifest.recordCount)), "deletions": .integer(Int64(manifest.deletionCount)),
                "rejected": .integer(Int64(rejected)), "warnings": .integer(Int64(warnings)),
                "assets": .integer(Int64(manifest.assetCount)), "asset_bytes": .integer(manifest.assetBytes),
                "payload_bytes": .integer(summary.payloadBytes), "bundle_bytes": bundleBytes.map { .integer($0) } ?? .null,
                "record_type_order": .array(manifest.recordTypeOrder.map { .string($0) }),
                "dangling_references": .integer(Int64(summary.danglingReferences)), "files": .array(types),
                "seconds": .number((Date().timeIntervalSince(started) * 1000).rounded() / 1000),
            ])
        guard !console.quiet else { return }
        let size = bundleBytes.map { ", \(Formatting.bytes($0))" } ?? ""
        console.line(
            "\(verb) \(Formatting.count(manifest.recordCount, "record")), \(Formatting.count(manifest.deletionCount, "deletion")) "
                + "and \(Formatting.count(manifest.assetCount, "asset")) (\(Formatting.bytes(manifest.assetBytes))) "
                + "into \(output) (\(summary.format)\(size))")
        console.line("")
        for line in Formatting.table(rows, rightAligned: [2, 3]) { console.line(line) }
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
