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

    @Test("a bundle written from lines prepared both ways is the bundle written from decoded records, byte for byte")
    func sameBundle() throws {
        let scratch = try Scratch()
        let assets = scratch.file("assets")
        let changes = try BundleRoundTripTests.changes(assets: assets) + [.record(Self.linked)]
        let lines = RecordJSONStyle.allCases.flatMap { style in changes.map { Array(style.render($0).utf8) } }
        func write(_ name: String, fast: Bool) throws -> BundleSummary {
            try FileManager.default.createDirectory(atPath: scratch.file(name), withIntermediateDirectories: true)
            var options = BundleWriter.Options(source: .init(kind: "test", description: "lines"))
            options.temporaryDirectory = scratch.path
            let writer = try BundleWriter(path: scratch.file("\(name)/b.tar.zst"), options: options, assets: try DirectoryAssetProvider(root: assets))
            var preparer = LinePreparer(decoder: CloudKitJSONDecoder(), validator: writer.preparer.validator)
            for line in lines {
                let fastPrepared = fast ? line.withUnsafeBytes { preparer.prepare($0) } : nil
                let prepared = try fastPrepared ?? writer.preparer.prepare(CloudKitJSONDecoder().decode(bytes: line))
                try writer.add(prepared)
            }
            return try writer.finish(createdAt: TestBundles.createdAt)
        }
        let decoded = try write("decoded", fast: false)
        let prepared = try write("prepared", fast: true)
        #expect(try scratch.read("decoded/b.tar.zst") == scratch.read("prepared/b.tar.zst"))
        #expect(decoded.manifest.recordCount == prepared.manifest.recordCount)
        // The same names in every style: later ones are rejected as duplicates, the same ones both ways.
        #expect(decoded.rejectedAtFinish > 0)
        #expect(decoded.rejectedAtFinish == prepared.rejectedAtFinish)
    }
}
