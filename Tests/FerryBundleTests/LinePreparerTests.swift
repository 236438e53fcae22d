import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The fast path of `ferry pack`: lines prepared straight from their bytes must be prepared exactly as decoded ones.
@Suite struct LinePreparerTests {
    static let oracle = TranscodeOracle()

    /// A record with a reference list into its zone and a reference into another.
    static let linked = Record(
        recordType: "Link", recordName: "Link.1", zoneID: ZoneID(zoneName: "CarZone"),
        fields: [
            "targets": .list(
                FieldList(
                    .reference,
                    [
                        .reference(Reference(recordName: "Car.A", zoneID: ZoneID(zoneName: "CarZone"), action: .deleteSelf)),
                        .reference(Reference(recordName: "Car.B", zoneID: ZoneID(zoneName: "CarZone"), action: .validate)),
                    ]) ?? .emptyUnknown),
            "away": .reference(Reference(recordName: "Bus.C", zoneID: ZoneID(zoneName: "BusZone"))),
        ])

    @Test("every record, in every JSON style, is prepared from its line as decoding it prepares it")
    func agreesWithDecoding() throws {
        let scratch = try Scratch()
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        var declined: Set<String> = []
        for change in try BundleRoundTripTests.changes(assets: scratch.file("assets")) + [.record(Self.linked)] {
            for style in RecordJSONStyle.allCases {
                let line = Array(style.render(change).utf8)
                let disagreement = Self.oracle.preparedDisagreement(line, lines: &lines)
                #expect(disagreement == nil, "\(style) \(change.recordName): \(disagreement ?? "")")
                if line.withUnsafeBytes({ lines.prepare($0) }) == nil { declined.insert(change.recordName) }
            }
        }
        // Left to decoding: deletions, a location (a form the scanner leaves to the full checks), and a reference into
        // another zone (the validator's to report).
        let expected = Set(["Car.gone", "Note.gone", TestRecords.everyType().recordName, Self.linked.recordName])
        #expect(declined == expected)
    }

    @Test(
        "a record with a problem is declined, so that decoding names it",
        arguments: [
            #"{"recordName":"_Car.1","recordType":"Car","fields":{}}"#,
            #"{"recordName":"Car.1","recordType":"1Car","fields":{}}"#,
            #"{"recordName":"Car.1","recordType":"Car","zoneID":{"zoneName":"bad zone!"},"fields":{}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"recordType":{"type":"STRING","value":"x"}}}"#,
            #"{"recordName":"Car.1","recordType":"Car","fields":{"1st":{"type":"STRING","value":"x"}}}"#,
            #"{"recordName":"Car.ü","recordType":"Car","fields":{}}"#,
            #"{"recordName":"Car.1","recordType":"Car","zoneID":{"zoneName":"CarZone"},"fields":{"o":{"type":"REFERENCE","value":{"recordName":"_x"}}}}"#,
        ])
    func declinesProblems(_ text: String) throws {
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        let line = Array(text.utf8)
        #expect(line.withUnsafeBytes { lines.prepare($0) } == nil)
        let slow = ChangePreparer(validator: RecordValidator()).prepare(try CloudKitJSONDecoder().decode(bytes: line))
        #expect(!slow.problems.isEmpty)
    }

    @Test("a record over the size limit is declined")
    func declinesOversizedRecords() {
        var limits = RecordValidator.Limits()
        limits.maxRecordBytes = 100
        var lines = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator(limits: limits))
        let small = Array(#"{"recordName":"Car.1","recordType":"Car","fields":{"s":{"type":"STRING","value":"short"}}}"#.utf8)
        let text = String(repeating: "x", count: 200)
        let large = Array(#"{"recordName":"Car.1","recordType":"Car","fields":{"s":{"type":"STRING","value":"\#(text)"}}}"#.utf8)
        #expect(small.withUnsafeBytes { lines.prepare($0) } != nil)
        #expect(large.withUnsafeBytes { lines.prepare($0) } == nil)
    }

    /// How ``sameBundle()`` hands lines to the writer.
    enum Way: String, CaseIterable { case decoded, prepared, batched }

    @Test("a bundle written from lines prepared each way is the bundle written from decoded records, byte for byte")
    func sameBundle() throws {
        let scratch = try Scratch()
        let assets = scratch.file("assets")
        let changes = try BundleRoundTripTests.changes(assets: assets) + [.record(Self.linked)]
        let lines = RecordJSONStyle.allCases.flatMap { style in changes.map { Array(style.render($0).utf8) } }
        var batchedLines = 0
        func write(_ way: Way) throws -> BundleSummary {
            try FileManager.default.createDirectory(atPath: scratch.file(way.rawValue), withIntermediateDirectories: true)
            var options = BundleWriter.Options(source: .init(kind: "test", description: "lines"))
            options.temporaryDirectory = scratch.path
            let writer = try BundleWriter(
                path: scratch.file("\(way.rawValue)/b.tar.zst"), options: options, assets: try DirectoryAssetProvider(root: assets))
            var preparer = LinePreparer(decoder: CloudKitJSONDecoder(), validator: writer.preparer.validator)
            func decoded(_ line: [UInt8]) throws -> PreparedChange {
                try writer.preparer.prepare(CloudKitJSONDecoder().decode(bytes: line))
            }
            switch way {
            case .decoded, .prepared:
                for line in lines {
                    let fastPrepared = way == .prepared ? line.withUnsafeBytes { preparer.prepare($0) } : nil
                    try writer.add(fastPrepared ?? decoded(line))
                }
            case .batched:
                // Batches of seven lines, as pack hands them over: most into one buffer, the rest each on its own.
                for batch in stride(from: 0, to: lines.count, by: 7).map({ lines[$0..<min($0 + 7, lines.count)] }) {
                    var prepared = PreparedLines()
                    let ways = batch.map { line in line.withUnsafeBytes { preparer.prepare($0, into: &prepared) } }
                    for (line, preparation) in zip(batch, ways) {
                        switch preparation {
                        case .batched(let index):
                            batchedLines += 1
                            try writer.add(prepared, at: index)
                        case .prepared(let change): try writer.add(change)
                        case .declined: try writer.add(decoded(line))
                        }
                    }
                }
            }
            return try writer.finish(createdAt: TestBundles.createdAt)
        }
        let summaries = try Way.allCases.map(write)
        for (way, summary) in zip(Way.allCases, summaries).dropFirst() {
            #expect(try scratch.read("decoded/b.tar.zst") == scratch.read("\(way.rawValue)/b.tar.zst"), "\(way)")
            #expect(summary.manifest.recordCount == summaries[0].manifest.recordCount, "\(way)")
            #expect(summary.rejectedAtFinish == summaries[0].rejectedAtFinish, "\(way)")
        }
        // The same names in every style: later ones are rejected as duplicates, the same ones every way.
        #expect(summaries[0].rejectedAtFinish > 0)
        // Lines of shapes seen before went into batches, references and all.
        #expect(batchedLines > lines.count / 2)
    }

    @Test("a batch hands each line back as the change prepared on its own")
    func batchedLinesAreTheirChanges() throws {
        var batching = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        var single = LinePreparer(decoder: CloudKitJSONDecoder(), validator: RecordValidator())
        let records = (0..<6).map { index in
            Record(
                recordType: index % 2 == 0 ? "Link" : "Note", recordName: "R.\(index)", zoneID: ZoneID(zoneName: "CarZone"),
                fields: [
                    "away": .reference(Reference(recordName: "Car.\(index)", zoneID: ZoneID(zoneName: "CarZone"), action: .deleteSelf)),
                    "n": .int64(Int64(index)),
                ])
        }
        let again = records.map { Record(recordType: $0.recordType, recordName: $0.recordName + "b", zoneID: $0.zoneID, fields: $0.fields) }
        let lines = (records + again).map { Array(RecordJSONStyle.reversed.render(.record($0)).utf8) }
        var batch = PreparedLines()
        var batched = 0
        for line in lines {
            let alone = try #require(line.withUnsafeBytes { single.prepare($0) })
            switch line.withUnsafeBytes({ batching.prepare($0, into: &batch) }) {
            case .batched(let index):
                batched += 1
                let change = batch.change(at: index)
                #expect(change.canonicalJSON == alone.canonicalJSON)
                #expect(change.key == alone.key && change.layout == alone.layout)
                #expect(change.recordType == alone.recordType && change.zoneID == alone.zoneID)
                #expect(change.references.map(\.target) == alone.references.map(\.target))
                #expect(change.references.map(\.deleteSelf) == alone.references.map(\.deleteSelf))
            case .prepared(let change): #expect(change.canonicalJSON == alone.canonicalJSON)
            case .declined: Issue.record("declined \(String(decoding: line, as: UTF8.self))")
            }
        }
        #expect(batched >= records.count)
        #expect(batch.count == batched)
    }
}
