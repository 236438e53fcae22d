import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@testable import FerryBundle

/// A bundle's record files (one per record type and zone) cost no memory each: the writer's spool sets files aside
/// and lists them in scratch files, and makes the same bundle, byte for byte, whatever its limits.
@Suite struct ManyRecordFilesTests {
    static let zones = (0..<40).map { ZoneID(zoneName: "Z\($0)", ownerName: $0 % 7 == 0 ? "_owner\($0)" : ZoneID.defaultOwnerName) }

    /// Records of three types in 40 zones in a shuffled order, with deletions, repeated names (rejected when
    /// finishing) and targets past a lowered DELETE_SELF limit (warned about when finishing).
    static func changes() -> [RecordChange] {
        var generator = SeededGenerator(seed: 23)
        var changes: [RecordChange] = []
        for (index, zone) in zones.enumerated() {
            for number in 0..<6 {
                changes.append(.record(Record(recordType: "Owner", recordName: "O.\(number)", zoneID: zone, fields: ["n": .int64(Int64(number))])))
                changes.append(
                    .record(TestRecords.ownedItem(number, owner: "O.\(number % 2)", zone: zone, text: String(repeating: "x", count: number * 40))))
            }
            if index % 3 == 0 { changes.append(.deletion(Deletion(recordType: "Gone", recordName: "G.\(index)", zoneID: zone))) }
            if index % 5 == 0 {
                changes.append(.record(Record(recordType: "Note", recordName: "N.1", zoneID: zone, fields: ["n": .int64(1)])))
            }
        }
        changes.shuffle(using: &generator)
        // Later occurrences of names already in the bundle, rejected when it is finished.
        // One of a type of its own, whose file goes with it.
        changes.append(.record(Record(recordType: "Stray", recordName: "O.1", zoneID: zones[3], fields: ["n": .int64(99)])))
        changes.append(.record(Record(recordType: "Note", recordName: "N.1", zoneID: zones[5], fields: ["n": .int64(2)])))
        return changes
    }

    struct Written: Equatable {
        var bytes: Data
        var found: [String]
        var files: [BundleManifest.RecordFile]
    }

    private func write(in scratch: Scratch, name: String, configure: (inout BundleWriter.Options) -> Void) throws -> Written {
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.temporaryDirectory = scratch.path
        options.validator.limits.maxDeleteSelfReferencesPerTarget = 2
        configure(&options)
        try FileManager.default.createDirectory(atPath: scratch.file(name), withIntermediateDirectories: true)
        let path = scratch.file("\(name)/bundle.tar.gz")
        let writer = try BundleWriter(path: path, options: options, assets: nil)
        for change in Self.changes() { try writer.add(change) }
        var found: [String] = []
        let summary = try writer.finish(
            createdAt: TestBundles.createdAt,
            found: { problem in
                found.append("\(problem.origin) \(problem.problem.rule.rawValue) \(problem.change.zoneID)/\(problem.change.recordName)")
            })
        return Written(bytes: try Data(contentsOf: URL(fileURLWithPath: path)), found: found.sorted(), files: try summary.manifest.files.all())
    }

    @Test func theSpoolMakesTheSameBundleWhateverItsLimits() throws {
        let scratch = try Scratch()
        let roomy = try write(in: scratch, name: "roomy") { _ in }
        let tight = try write(in: scratch, name: "tight") { options in
            // Lines go to the log every few records, three files are filled at once, and the file list is on disk.
            options.spoolMemoryLimit = 300
            options.spoolActiveFiles = 3
            options.fileListMemoryLimit = 5
            options.admissionMemoryLimit = 4096
        }
        #expect(tight == roomy)
        // 40 zones of owners and items, 14 of deletions, 8 of notes; no strays.
        #expect(roomy.files.count == 40 * 2 + 14 + 8)
        #expect(roomy.found.filter { $0.contains("duplicate") }.count == 2)
        // Each zone's two owners have three DELETE_SELF references each.
        #expect(roomy.found.filter { $0.contains("delete-self") }.count == 80, "\(roomy.found)")
        let kinds = roomy.files.map(\.kind)
        #expect(kinds == kinds.filter { $0 == .records } + kinds.filter { $0 == .deletions }, "records, then deletions")
        #expect(scratch.listing().filter { $0.hasPrefix("ferry-") }.isEmpty, "no scratch file is left")

        let reader = try BundleReader(path: scratch.file("tight/bundle.tar.gz"))
        let report = try reader.verify()
        #expect(report.isValid, "\(report.issues)")
        #expect(report.recordsChecked == 40 * 12 + 8)
        #expect(!reader.manifest.recordTypeOrder.contains("Stray"))
        #expect(try reader.zones.count() == 40)
    }

    @Test func aFileListInAScratchFileReadsBackAsWritten() throws {
        let scratch = try Scratch()
        let files = Self.zones.map { zone in
            BundleManifest.RecordFile(
                path: BundleLayout.recordsPath(type: "Car", zone: zone), kind: .records, recordType: "Car", zoneID: zone, count: 3,
                bytes: 300)
        }
        var builder = RecordFileList.Builder(temporaryDirectory: scratch.path, memoryLimit: 4)
        for file in files { try builder.append(file) }
        let list = try builder.finish()
        #expect(try list.all() == files)
        #expect(list == RecordFileList(files))
        #expect(list.recordCount == 3 * Self.zones.count && list.deletionCount == 0)
        #expect(scratch.listing().contains { $0.hasPrefix("ferry-record-files") })
    }

    /// More files than either side keeps in memory: the writer's list and the reader's go to scratch files.
    @Test func aBundleOfThousandsOfFilesReadsBack() throws {
        let scratch = try Scratch()
        let count = 4200
        let changes = (0..<count).map { index in
            RecordChange.record(Record(recordType: "Note", recordName: "N.\(index)", zoneID: ZoneID(zoneName: "Z\(index)"), fields: [:]))
        }
        _ = try TestBundles.write(changes, to: scratch.file("many.tar.zst"))
        let reader = try BundleReader(path: scratch.file("many.tar.zst"), temporaryDirectory: scratch.path)
        #expect(reader.manifest.files.count == count && reader.manifest.recordCount == count)
        #expect(scratch.listing().contains { $0.hasPrefix("ferry-record-files") }, "the reader's list is in a scratch file")
        let report = try reader.verify(temporaryDirectory: scratch.path)
        #expect(report.isValid && report.recordsChecked == count)
        var zones: [String] = []
        try reader.manifest.files.forEach { zones.append($0.zoneID.zoneName) }
        #expect(zones == zones.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } && Set(zones).count == count)

        // With 4 KiB for each table, the reader's tables of files and zones are in scratch files too, and answer alike.
        let tight = try BundleReader(path: scratch.file("many.tar.zst"), temporaryDirectory: scratch.path, scratchMemoryLimit: 4096)
        #expect(scratch.listing().contains { $0.hasPrefix("ferry-payload-files") }, "the table of files is in a scratch file")
        #expect(try tight.verify(temporaryDirectory: scratch.path).recordsChecked == count)
        var listed: [String] = []
        try tight.zones.forEach { listed.append($0.zoneName) }
        #expect(scratch.listing().contains { $0.hasPrefix("ferry-schema-zones") }, "the zones are in a scratch file")
        #expect(listed == zones)
        var lines = 0
        try tight.forEachChangeLine(BundleReader.Selection(zoneNames: ["Z4199", "Z0"])) { _ in lines += 1 }
        #expect(lines == 2)

        // A file gone from an extracted copy is reported by path, found missing from the table on disk.
        try reader.extract(to: scratch.file("many"))
        let gone = BundleLayout.recordsPath(type: "Note", zone: ZoneID(zoneName: "Z2100"))
        try FileManager.default.removeItem(atPath: scratch.file("many/\(gone)"))
        let damaged = try BundleReader(path: scratch.file("many"), temporaryDirectory: scratch.path, scratchMemoryLimit: 4096)
        let issues = try damaged.verify(temporaryDirectory: scratch.path).issues.map(\.message)
        #expect(issues.contains { $0.hasSuffix("\(gone) is listed in manifest-sha256.txt but missing") }, "\(issues)")
    }

    /// The lines of many small files are checked in batches that span files, yet each file's issues come together and
    /// in the scan's order: what the scan says of the file (its checksum), then its lines.
    @Test func issuesOfManySmallFilesKeepTheScansOrder() throws {
        let scratch = try Scratch()
        let changes = (0..<300).map { index in
            RecordChange.record(Record(recordType: "Note", recordName: "N.\(index)", zoneID: ZoneID(zoneName: "Z\(index)"), fields: [:]))
        }
        _ = try TestBundles.write(changes, to: scratch.file("small.tar.gz"))
        try BundleReader(path: scratch.file("small.tar.gz")).extract(to: scratch.file("small"))
        let damaged = ["Z250", "Z10", "Z120"]
        for zone in damaged {
            // The same size, no longer JSON.
            let path = "small/\(BundleLayout.recordsPath(type: "Note", zone: ZoneID(zoneName: zone)))"
            var bytes = try scratch.read(path)
            bytes[0] = UInt8(ascii: "[")
            try scratch.write(path, bytes)
        }
        let reader = try BundleReader(path: scratch.file("small"))
        let issues = try reader.verify().issues
        #expect(try reader.verify().issues.map(\.message) == issues.map(\.message), "the same issues in the same order every time")
        var expected: [BundleError.Code] = []
        for _ in damaged { expected += [.checksumMismatch, .invalidRecord] }
        #expect(issues.map(\.code) == expected, "\(issues)")
        let files = issues.map { issue in damaged.first { issue.message.contains("/\($0)/") } }
        #expect(files == ["Z10", "Z10", "Z120", "Z120", "Z250", "Z250"], "in path order, as the scan reads them")
    }
}
