import FerryCore
import FerryJSON
import FerryTesting
import Foundation
import Testing

/// `ferry copy` and `ferry plan` on Core Data stores, through the built binary.
@Suite struct CopyCommandTests {
    static let root = TestEnvironment.packageRoot
    static let cars = "\(root)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"
    static let scorebook = "\(root)/Samples/scorebook/store/Scorebook.sqlite"
    static let created = ["--created-at", "2026-01-02T03:04:05Z"]

    /// The NDJSON lines of `ferry cat`, with asset file names dropped (a store keeps none), sorted.
    private func catLines(_ bundle: String, in directory: String) throws -> [String] {
        let cat = try ferry(["cat", bundle], in: directory)
        #expect(cat.status == 0, "\(cat.errors)")
        return cat.output.split(separator: "\n").map {
            String($0).replacingOccurrences(of: #""fileName":"[^"]*",?"#, with: "", options: .regularExpression)
        }.sorted()
    }

    @Test func typePrefixedCopyOfTheSampleStoreEqualsTheSampleRecords() throws {
        let scratch = try Scratch()
        let copy = try ferry(["copy", Self.cars, "cars.tar.gz"] + Self.created, in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        try expectSnapshot(copy.output, named: "copy-cars.txt")
        let pack = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "packed.tar.gz", "-q"], in: scratch.path)
        #expect(pack.status == 0, "\(pack.errors)")
        // The sample records were written by hand from seeds §1; the store holds the same data the app's way.
        #expect(try catLines("cars.tar.gz", in: scratch.path) == (try catLines("packed.tar.gz", in: scratch.path)))
        let verify = try ferry(["verify", "cars.tar.gz"], in: scratch.path)
        #expect(verify.status == 0, "\(verify.errors)")
    }

    @Test func scorebookPresetGivesTheSeedLayout() throws {
        let scratch = try Scratch()
        let copy = try ferry(["copy", Self.scorebook, "scores.tar.zst", "--preset", "scorebook", "-q"] + Self.created, in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        let lines = try catLines("scores.tar.zst", in: scratch.path)
        try expectSnapshot(lines.joined(separator: "\n") + "\n", named: "copy-scorebook.ndjson")
        for line in lines {
            let record = try #require(try JSONParser.parse(line).objectValue)
            let type = try #require(record["recordType"]?.stringValue)
            #expect(record["recordName"]?.stringValue?.hasPrefix("\(type)|~|") == true)
            #expect(record["zoneID"]?.objectValue?["zoneName"] == "ScorebookData")
        }
    }

    @Test func coreDataMirrorPresetGivesCloudKitContainersLayout() throws {
        let scratch = try Scratch()
        let copy = try ferry(
            ["copy", Self.scorebook, "mirror.tar.gz", "--preset", "nspersistentcloudkitcontainer", "-q"] + Self.created, in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        let lines = try catLines("mirror.tar.gz", in: scratch.path)
        try expectSnapshot(lines.joined(separator: "\n") + "\n", named: "copy-scorebook-nspersistentcloudkitcontainer.ndjson")
        for line in lines {
            let record = try #require(try JSONParser.parse(line).objectValue)
            #expect(record["zoneID"]?.objectValue?["zoneName"] == "com.apple.coredata.cloudkit.zone")
            let type = try #require(record["recordType"]?.stringValue)
            #expect(type == "CDMR" || type.hasPrefix("CD_"))
            let fields = record["fields"]?.objectValue.map { Array($0).map(\.key) } ?? []
            #expect(fields.allSatisfy { $0.hasPrefix("CD_") }, "\(fields)")
            #expect(!line.contains(#""REFERENCE""#), "relationships are record names, not references")
        }
    }

    @Test func dryRunCountsWhatARunWritesAndWritesNothing() throws {
        let scratch = try Scratch()
        let dry = try ferry(["copy", Self.cars, "cars.tar.gz", "-n", "--json", "--reject-file", "r.jsonl"] + Self.created, in: scratch.path)
        #expect(dry.status == 0, "\(dry.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "a dry run writes nothing")
        let real = try ferry(["copy", Self.cars, "cars.tar.gz", "--json"] + Self.created, in: scratch.path)
        #expect(real.status == 0, "\(real.errors)")
        func summary(_ output: String) throws -> [String: JSONValue] {
            let lines = try output.split(separator: "\n").map { try JSONParser.parse(String($0)) }
            let object = try #require(lines.last { $0.objectValue?["message_type"] == "summary" }?.objectValue)
            var members: [String: JSONValue] = [:]
            for member in object where !["seconds", "dry_run", "bundle_bytes", "output"].contains(member.key) { members[member.key] = member.value }
            return members
        }
        #expect(try summary(dry.output) == (try summary(real.output)))
    }

    @Test func aPlanFromFerryPlanReproducesThePreset() throws {
        let scratch = try Scratch()
        let plan = try ferry(["plan", Self.cars], in: scratch.path)
        #expect(plan.status == 0, "\(plan.errors)")
        #expect(plan.output.contains("zoneFrom:"))
        try scratch.write("mapping.yaml", plan.output)
        let fromPlan = try ferry(["copy", Self.cars, "a.tar.gz", "--mapping", "mapping.yaml", "-q"] + Self.created, in: scratch.path)
        #expect(fromPlan.status == 0, "\(fromPlan.errors)")
        let fromPreset = try ferry(["copy", Self.cars, "b.tar.gz", "-q"] + Self.created, in: scratch.path)
        #expect(fromPreset.status == 0, "\(fromPreset.errors)")
        // The bag's folder is named after the file: a second copy of the same name, elsewhere.
        try FileManager.default.createDirectory(atPath: scratch.file("again"), withIntermediateDirectories: false)
        let again = try ferry(["copy", Self.cars, "b.tar.gz", "-q"] + Self.created, in: scratch.file("again"))
        #expect(again.status == 0, "\(again.errors)")
        let first = try Data(contentsOf: URL(fileURLWithPath: scratch.file("b.tar.gz")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.file("again/b.tar.gz"))) == first, "two copies are byte-identical")
        #expect(try catLines("a.tar.gz", in: scratch.path) == (try catLines("b.tar.gz", in: scratch.path)))
    }

    @Test func sinceKeepsOnlyRecordsChangedSinceATime() throws {
        let scratch = try Scratch()
        // Buses (lastUpdate 2016-11-22 and later) and every note qualify; the cars and trucks are older.
        let copy = try ferry(["copy", Self.cars, "recent.tar.gz", "--since", "1479700000", "--json", "-q"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        let lines = try copy.output.split(separator: "\n").map { try JSONParser.parse(String($0)).objectValue }
        let summary = lines.last { $0?["message_type"] == "summary" }
        #expect(summary??["records"] == 8 && summary??["deletions"] == 1, "\(copy.output)")
        let cat = try ferry(["cat", "recent.tar.gz", "--type", "Car"], in: scratch.path)
        #expect(!cat.output.contains(#""fields""#), "no car changed since; only the car tombstone passes")
        let bad = try ferry(["copy", Self.cars, "x.tar.gz", "--since", "last tuesday"], in: scratch.path)
        #expect(bad.status == 64)
    }

    @Test func mappingErrorsHaveTheirExitCodes() throws {
        let scratch = try Scratch()
        let preset = try ferry(["copy", Self.cars, "a.tar.gz", "--preset", "fancy"], in: scratch.path)
        #expect(preset.status == 64 && preset.errors.contains("type-prefixed"), "\(preset.errors)")
        try scratch.write("bad.yaml", "separator: \".\"\nentities:\n  Boat: {}\n")
        let entity = try ferry(["copy", Self.cars, "a.tar.gz", "--mapping", "bad.yaml"], in: scratch.path)
        #expect(entity.status == 78 && entity.errors.contains("Boat"), "\(entity.errors)")
        try scratch.write("broken.yaml", "separator: [\n")
        let broken = try ferry(["copy", Self.cars, "a.tar.gz", "--mapping", "broken.yaml"], in: scratch.path)
        #expect(broken.status == 78 && broken.errors.contains("broken.yaml"), "\(broken.errors)")
        let missing = try ferry(["copy", Self.cars, "a.tar.gz", "--mapping", "gone.yaml"], in: scratch.path)
        #expect(missing.status == 66, "\(missing.errors)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("a.tar.gz")))
    }

    @Test func everyFixtureStoreCopiesWithEveryPreset() throws {
        guard let fixtures = SharedFixtures.directory else { return }
        let scratch = try Scratch()
        for store in SharedFixtures.coreDataStores {
            let dump = try ferry(["dump", "\(fixtures)/\(store)", "--json", "-q"], in: scratch.path)
            let objects = dump.output.split(separator: "\n").filter { $0.contains(#""message_type":"object""#) }.count
            for preset in ["type-prefixed", "scorebook", "plain", "nspersistentcloudkitcontainer"] {
                let copy = try ferry(["copy", "\(fixtures)/\(store)", "out.tar.gz", "--preset", preset, "--json", "-q"], in: scratch.path)
                #expect(copy.status == 0, "\(store) \(preset): \(copy.errors)")
                let lines = try copy.output.split(separator: "\n").map { try JSONParser.parse(String($0)).objectValue }
                let summary = lines.last { $0?["message_type"] == "summary" }
                let written = (summary??["records"]?.int64Value ?? -1) + (summary??["deletions"]?.int64Value ?? 0)
                if preset == "nspersistentcloudkitcontainer" {
                    #expect(written >= Int64(objects), "\(store) \(preset): every object becomes a record, plus CDMR links")
                } else {
                    #expect(written == Int64(objects), "\(store) \(preset): every object becomes one record or deletion")
                }
                let verify = try ferry(["verify", "out.tar.gz", "-q"], in: scratch.path)
                #expect(verify.status == 0, "\(store) \(preset): \(verify.errors)")
            }
        }
    }
}
