import FerryCore
import FerryRecords
import FerrySorting
import FerryTesting
import Foundation
import Testing

@testable import FerryBundle

/// The spool compresses large runs of record lines into Zstandard frames while records are read; a .tar.zst bundle
/// takes them as they are, every other format gets them decompressed, and the checks that read lines back when
/// finishing (repeated names, DELETE_SELF overflows, files set aside) read them through the frames.
@Suite struct CompressedSpoolTests {
    static let zones = [ZoneID(zoneName: "A"), ZoneID(zoneName: "B", ownerName: "_owner")]

    /// Owners and items in two zones, interleaved (60 owners in each, each with 20 items), about 1.6 MB in all: with a 512 KiB spool, runs of about 128 KiB,
    /// so compressed ones; each item's text is different, so runs compress but not to nothing.
    static func changes(items: Int = 2400) -> [RecordChange] {
        let text = TestBundles.compressibleText(count: 600 * items, seed: 5)
        var changes: [RecordChange] = []
        for number in 0..<items {
            let zone = zones[number % 2]
            if number % 40 < 2 {
                changes.append(.record(Record(recordType: "Owner", recordName: "O.\(number / 40)", zoneID: zone, fields: [:])))
            }
            let slice = String(decoding: text[(number * 600)..<(number * 600 + 600)], as: UTF8.self)
            changes.append(.record(TestRecords.ownedItem(number, owner: "O.\(number / 40)", zone: zone, text: slice)))
        }
        return changes
    }

    private func options(_ scratch: Scratch, format: ArchiveFormat) -> BundleWriter.Options {
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.temporaryDirectory = scratch.path
        options.format = format
        options.spoolMemoryLimit = 512 << 10
        return options
    }

    /// Writes `changes`, collecting what finishing found, and returns the bundle's path.
    private func write(
        _ changes: [RecordChange], in scratch: Scratch, format: ArchiveFormat, name: String = "b",
        configure: (inout BundleWriter.Options) -> Void = { _ in }
    ) throws -> (path: String, found: [String]) {
        var options = options(scratch, format: format)
        configure(&options)
        try FileManager.default.createDirectory(atPath: scratch.file(name), withIntermediateDirectories: true)
        let path = scratch.file("\(name)/bundle.\(format.rawValue)")
        let writer = try BundleWriter(path: path, options: options, assets: nil)
        for change in changes { try writer.add(change) }
        var found: [String] = []
        try writer.finish(
            createdAt: TestBundles.createdAt,
            found: { problem in
                found.append("\(problem.origin) \(problem.problem.rule.rawValue) \(problem.change.zoneID)/\(problem.change.recordName)")
            })
        return (path, found)
    }

    /// The canonical lines of a bundle's records, in bundle order.
    private func lines(of path: String) throws -> [String] {
        var lines: [String] = []
        try BundleReader(path: path).forEachChangeLine { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    @Test func aFrameReadsBackOnlyWhole() throws {
        let text = Array(TestBundles.compressibleText(count: 200 << 10, seed: 3))
        let frame = try text.withUnsafeBytes { try ZstdFrameEncoder().frame(of: $0) }
        #expect(frame.count < text.count / 2)
        #expect(try frame.withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: text.count) } == text)
        // The same bytes give the same frame.
        #expect(try text.withUnsafeBytes { try ZstdFrameEncoder().frame(of: $0) } == frame)
        // A size other than the frame's, a frame cut short, a damaged byte: each is refused, not read as something else.
        #expect(throws: BundleError.self) { try frame.withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: text.count - 1) } }
        #expect(throws: BundleError.self) { try frame.withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: text.count + 1) } }
        #expect(throws: BundleError.self) {
            try Array(frame.dropLast(9)).withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: text.count) }
        }
        var damaged = frame
        damaged[damaged.count / 2] ^= 0x5A
        #expect(throws: BundleError.self) { try damaged.withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: text.count) } }
    }

    @Test func aDamagedRunListIsRefused() throws {
        var record = ByteRecordWriter()
        SpoolRun(offset: 10, stored: 5, size: 7, isCompressed: false).encode(into: &record)
        let bytes = record.bytes
        #expect(throws: BundleError.self) {
            try bytes.withUnsafeBytes { buffer in
                var reader = ByteRecordReader(buffer)
                _ = try SpoolRun(reading: &reader)
            }
        }
    }

    @Test func theSpoolCompressesLargeRunsAndKeepsSmallOnesAsTheyAre() throws {
        let scratch = try Scratch()
        let spool = try RecordSpool(parent: scratch.path, memoryLimit: 256 << 10)
        defer { spool.remove() }
        let zoneID = ZoneID(zoneName: ZoneID.defaultZoneName)
        let text = TestBundles.compressibleText(count: 900 << 10, seed: 9)
        var places: [FileLine] = []
        for index in 0..<3000 {
            let line = Array(text[(index * 300)..<(index * 300 + 300)])
            places.append(try line.withUnsafeBytes { try spool.append($0, kind: .records, recordType: "Item", zoneID: zoneID) })
            if index % 100 == 0 {
                _ = try Array("{}".utf8).withUnsafeBytes { try spool.append($0, kind: .records, recordType: "Tiny", zoneID: zoneID) }
            }
        }
        try spool.finish()
        let plan = try spool.plan(ranks: ["Item": 0, "Tiny": 1], dropping: [:], temporaryDirectory: scratch.path) { _, _ in }
        var runs: [String: [SpoolRun]] = [:]
        try plan.forEachFile { path, size, file in
            while let run = try file.next() { runs[path, default: []].append(run) }
            #expect(runs[path, default: []].reduce(Int64(0)) { $0 + $1.size } == size)
        }
        let zone = zoneID
        let items: [SpoolRun] = try #require(runs[BundleLayout.recordsPath(type: "Item", zone: zone)])
        // All but the last, which holds what was left when the spool finished.
        let compressed = items.dropLast().allSatisfy { $0.isCompressed }
        #expect(items.count > 2 && compressed, "\(items)")
        let stored = items.reduce(Int64(0)) { $0 + $1.stored }
        let size = items.reduce(Int64(0)) { $0 + $1.size }
        #expect(stored * 2 < size, "compressed to under half")
        let tiny: [SpoolRun] = try #require(runs[BundleLayout.recordsPath(type: "Tiny", zone: zone)])
        #expect(tiny.allSatisfy { !$0.isCompressed })
        // A line read back by its place comes through the frame.
        let wanted: Set = [places[0], places[517], places[2999]]
        let found = try spool.lines(at: wanted)
        #expect(found[places[517]] == Array(text[(517 * 300)..<(518 * 300)]))
        #expect(found.count == 3)
    }

    @Test("a .tar.zst takes the compressed runs as frames, and holds the same tar as a .tar.gz")
    func theTarIsTheSameInEveryCompression() throws {
        let scratch = try Scratch()
        let changes = Self.changes()
        let zst = try write(changes, in: scratch, format: .tarZstd, name: "zst").path
        let gz = try write(changes, in: scratch, format: .tarGzip, name: "gz").path
        let zip = try write(changes, in: scratch, format: .zip, name: "zip").path
        for path in [zst, gz, zip] {
            let report = try BundleReader(path: path).verify()
            #expect(report.isValid && report.recordsChecked == changes.count, "\(path): \(report.issues)")
        }
        let expected = try lines(of: gz)
        #expect(expected.count == changes.count)
        #expect(try lines(of: zst) == expected)
        #expect(try lines(of: zip) == expected)

        let fromZstd = try ProcessResult.run("/usr/bin/env", ["zstd", "-dc", zst])
        let fromGzip = try ProcessResult.run("/usr/bin/env", ["gzip", "-dc", gz])
        #expect(fromZstd.status == 0 && fromGzip.status == 0, "\(fromZstd.errors) \(fromGzip.errors)")
        let sameTar = fromZstd.stdout == fromGzip.stdout  // not in #expect: it would print megabytes
        #expect(sameTar, "the .tar.zst and the .tar.gz hold different tar streams")
        let listing = try ProcessResult.run("/usr/bin/env", ["zstd", "-lv", zst])
        let frames = listing.output.split(separator: "\n").first { $0.contains("# Zstandard Frames") }
        let count = frames.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        #expect((count ?? 0) > 4, "the runs were not taken as frames: \(listing.output)")

        // Deterministic: the same input and options, the same file.
        let again = try write(changes, in: scratch, format: .tarZstd, name: "again").path
        let same = try Data(contentsOf: URL(fileURLWithPath: again)) == Data(contentsOf: URL(fileURLWithPath: zst))
        #expect(same, "two writes of the same .tar.zst differ")
    }

    @Test("repeated names, DELETE_SELF overflows and files set aside read compressed runs back", arguments: [ArchiveFormat.tarZstd, .tarGzip])
    func finishingReadsCompressedRunsBack(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        var changes = Self.changes()
        // Late repeats of names, in both zones: rejected when finishing, read back from their compressed runs.
        changes.append(.record(Record(recordType: "Item", recordName: "I.7", zoneID: Self.zones[1], fields: ["text": .string("again")])))
        changes.append(.record(Record(recordType: "Item", recordName: "I.1200", zoneID: Self.zones[0], fields: [:])))
        // A third file, taking turns with the others, so that with two active files each is set aside and taken back.
        for number in 0..<600 {
            changes.insert(
                .record(Record(recordType: "Memo", recordName: "M.\(number)", zoneID: Self.zones[0], fields: ["n": .int64(Int64(number))])),
                at: number * 4)
        }
        let roomy = try write(changes, in: scratch, format: format, name: "roomy") { $0.validator.limits.maxDeleteSelfReferencesPerTarget = 15 }
        let tight = try write(changes, in: scratch, format: format, name: "tight") { options in
            options.validator.limits.maxDeleteSelfReferencesPerTarget = 15
            options.spoolActiveFiles = 2
        }
        for written in [roomy, tight] {
            #expect(written.found.filter { $0.contains("duplicate") }.count == 2, "\(written.found)")
            #expect(written.found.contains { $0.contains("duplicate") && $0.hasSuffix("/I.7") })
            // 120 owners, each with 20 items: every one past its 15th DELETE_SELF reference is warned about once.
            #expect(written.found.filter { $0.contains("delete-self") }.count == 120, "\(written.found.prefix(5))")
            let report = try BundleReader(path: written.path).verify()
            #expect(report.isValid && report.recordsChecked == changes.count - 2, "\(report.issues)")
        }
        #expect(roomy.found == tight.found)
        let kept = try lines(of: roomy.path)
        #expect(try lines(of: tight.path) == kept)
        #expect(!kept.contains { $0.contains("\"again\"") }, "the later I.7 is the one left out")
    }
}
