import FerryCore
import FerryJSON
import FerryPlist
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// What a new user tripped over (issue 32), through the built binary: each input is made in the test, and each run
/// must end with the documented exit code and a message that names the problem.
@Suite struct TripwireCommandTests {
    static let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"

    @Test func aLoopInTheEntityHierarchyIsRefusedByEveryVerb() throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try Sample.storeCopy(editedBy: "UPDATE Z_PRIMARYKEY SET Z_SUPER = 1 WHERE Z_ENT = 1")
        let store = Sample.copiedStore
        for arguments in [
            ["inspect", store], ["dump", store], ["copy", store, "out.tar.zst"], ["copy", store, "out.ferry"], ["plan", store],
            ["dump", store, "--infer-model"], ["diff", store, store],
        ] {
            let result = try ferry(arguments, in: scratch.path)
            #expect(result.status == 65, "\(arguments): \(result.errors)")
            #expect(result.errors.contains("loop") && result.errors.contains("Z_ENT 1"), "\(arguments): \(result.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.zst")))
    }

    @Test func aTargetWithAnUnknownExtensionIsRefused() throws {
        let scratch = try Scratch()
        for target in ["x.tar.xz", "x.tar", "x.zst", "x.tar.bz2", "notes.txt", "backup"] {
            let result = try ferry(["copy", Self.cars, target], in: scratch.path)
            #expect(result.status == 64, "\(target): \(result.errors)")
            #expect(result.errors.contains(".tar.zst") && result.errors.contains(".ferry"), "\(target): \(result.errors)")
            #expect(!FileManager.default.fileExists(atPath: scratch.file(target)), "\(target) was written")
        }
        // An existing local store is written whatever its name; an existing file of another kind is not.
        let first = try ferry(["copy", Self.cars, "a.ferry", "-q"], in: scratch.path)
        #expect(first.status == 0, "\(first.errors)")
        try FileManager.default.moveItem(atPath: scratch.file("a.ferry"), toPath: scratch.file("store.db"))
        let again = try ferry(["copy", Self.cars, "store.db", "--json", "-q"], in: scratch.path)
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains(#""unchanged":"#), "\(again.output)")
        try scratch.write("notes.db", "my notes\n")
        let refused = try ferry(["copy", Self.cars, "notes.db"], in: scratch.path)
        #expect(refused.status == 64 && refused.errors.contains("not a Ferry local store"), "\(refused.errors)")
        #expect(try scratch.read("notes.db") == Data("my notes\n".utf8))
    }
}

/// `ferry convert` of plists that share objects: streamed in constant memory, refused past `--max-output`.
@Suite struct ConvertFanOutCommandTests {
    /// A binary plist whose levels each hold the next twice, down to `leaf`: 2^levels copies of it in the JSON.
    private func fanOut(_ leaf: String, levels: Int) -> [UInt8] { HostilePlists.fanOut(leaf: leaf, levels: levels).bytes }

    @Test func refusesPastTheLimitAndStreamsBelowIt() throws {
        let scratch = try Scratch()
        try scratch.write("fan.plist", Data(fanOut("leaf", levels: 16)))
        let refused = try ferry(["convert", "fan.plist", "--max-output", "64K"], in: scratch.path)
        #expect(refused.status == 65, "\(refused.errors)")
        #expect(refused.errors.contains("is used 65536 times") && refused.errors.contains("--max-output"), "\(refused.errors)")
        #expect(refused.output.isEmpty, "nothing is printed before the size is known")
        let bad = try ferry(["convert", "fan.plist", "--max-output", "lots"], in: scratch.path)
        #expect(bad.status == 64 && bad.errors.contains("--max-output"), "\(bad.errors)")
        // Under the limit: the same text as the tree gives, in each layout.
        let document = try PlistDocument(bytes: fanOut("leaf", levels: 16))
        let single = try ferry(["convert", "fan.plist"], in: scratch.path)
        #expect(single.status == 0, "\(single.errors)")
        #expect(single.output == JSONWriter.prettyText(try document.value().jsonValue))
        let json = try ferry(["convert", "fan.plist", "--json"], in: scratch.path)
        let message = try #require(try JSONParser.parse(json.output.trimmingCharacters(in: .newlines)).objectValue)
        #expect(message["message_type"] == "result" && message["format"] == "binary")
        #expect(message["value"].map { JSONWriter.canonical($0) } == JSONWriter.canonical(try document.value().jsonValue))
        let lines = try ferry(["convert", "fan.plist", "fan.plist"], in: scratch.path)
        #expect(lines.output.split(separator: "\n").count == 2)
    }

    @Test func streamsAHugeOutputInConstantMemory() throws {
        let scratch = try Scratch()
        // A 1 MB string used 256 times: 256 MB of JSON from a 1 MB file.
        try scratch.write("big.plist", Data(fanOut(String(repeating: "ab", count: 1 << 19), levels: 8)))
        let run = try ferryMeasured(["convert", "big.plist"], in: scratch.path)
        #expect(run.status == 0)
        // Peak RSS in KiB: the text is 256 MB; the tree and the text were each held whole before (557 MB).
        #expect(run.peakKiB < 120_000, "peak RSS \(run.peakKiB) KiB")
    }
}

/// `ferry verify` of a bundle with a great many problems: every one counted, streamed with `--json`, memory bounded.
@Suite struct VerifyManyProblemsCommandTests {
    @Test func countsAndStreamsEveryProblemInBoundedMemory() throws {
        let scratch = try Scratch()
        let pack = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "good.tar.gz", "-q"], in: scratch.path)
        #expect(pack.status == 0, "\(pack.errors)")
        #expect(try ferry(["unpack", "good.tar.gz", "bag"], in: scratch.path).status == 0)
        // The bag, then 300 000 empty files no manifest lists.
        let first = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data/manifest.json", "data/schema.json"]
        let tar = try TarBuilder().addTree(scratch.file("bag"), prefix: "many") { lhs, rhs in
            let (left, right) = (first.firstIndex(of: lhs) ?? first.count, first.firstIndex(of: rhs) ?? first.count)
            return left != right ? left < right : lhs < rhs
        }
        let extra = 300_000
        for index in 0..<extra { tar.add("many/data/extra/\(index / 1000)/file-\(index)", .file(Data())) }
        try tar.write(to: scratch.file("many.tar.gz"))
        let text = try ferry(["verify", "many.tar.gz"], in: scratch.path)
        #expect(text.status == 65)
        #expect(text.errors.split(separator: "\n").count < 110, "the first 100 problems, then a count")
        #expect(text.errors.contains("… and \(extra - 100) more problems (--json lists them all)"), "\(text.errors.suffix(300))")
        #expect(text.output.contains("DAMAGED: \(extra) problems"), "\(text.output)")
        let streamed = try ferryMeasured(["verify", "many.tar.gz", "--json"], in: scratch.path, counting: #""message_type":"error""#)
        #expect(streamed.status == 65 && streamed.matching == extra)
        // Peak RSS in KiB (40 MB here); every problem and every name was kept before (140 MB here, 1 GB for 3 M).
        #expect(streamed.peakKiB < 80_000, "peak RSS \(streamed.peakKiB) KiB")
        let checksums = try ferryMeasured(["verify", "--checksums-only", "many.tar.gz"], in: scratch.path)
        #expect(checksums.status == 65 && checksums.peakKiB < 80_000, "peak RSS \(checksums.peakKiB) KiB")
    }
}

/// `--since` and `--pending-only` say when the field they read is not there, instead of keeping everything silently.
@Suite struct IncrementalFilterCommandTests {
    static let cars = TripwireCommandTests.cars
    static let cache = "\(TestEnvironment.packageRoot)/Samples/local-data-service/LocalEntities.archive"

    private func summary(_ output: String) throws -> JSONObject? {
        try output.split(separator: "\n").map { try JSONParser.parse(String($0)).objectValue }.last { $0?["message_type"] == "summary" } ?? nil
    }

    @Test func aDateAloneIsItsMidnightUTC() throws {
        let scratch = try Scratch()
        let day = try ferry(["copy", Self.cars, "day.tar.gz", "--since", "2016-11-22", "--json", "-q"], in: scratch.path)
        let time = try ferry(["copy", Self.cars, "time.tar.gz", "--since", "2016-11-22T00:00:00Z", "--json", "-q"], in: scratch.path)
        #expect(day.status == 0 && time.status == 0, "\(day.errors)")
        #expect(try summary(day.output)?["records"] == (try summary(time.output)?["records"]))
        #expect(try ferry(["copy", Self.cars, "x.tar.gz", "--since", "2016-13-45"], in: scratch.path).status == 64)
    }

    @Test func aFilterFieldNoRecordHasIsAWarningNamingTheFields() throws {
        let scratch = try Scratch()
        let since = try ferry(["copy", Self.cars, "a.tar.gz", "--since", "2016-11-22", "--since-field", "nope", "--json"], in: scratch.path)
        #expect(since.status == 0, "\(since.errors)")
        #expect(since.errors.contains("--since: no record has the field nope (--since-field), so every record was kept"), "\(since.errors)")
        #expect(since.errors.contains("lastUpdate"), "the fields the records have are named: \(since.errors)")
        #expect(try summary(since.output)?["warnings"]?.int64Value ?? 0 >= 1)
        let wrongType = try ferry(["copy", Self.cars, "b.tar.gz", "--since", "2016-11-22", "--since-field", "name"], in: scratch.path)
        #expect(wrongType.errors.contains("the field name (--since-field) holds STRING, not TIMESTAMP"), "\(wrongType.errors)")
        let pending = try ferry(["copy", Self.cars, "c.ferry", "--pending-only"], in: scratch.path)
        #expect(pending.status == 0, "\(pending.errors)")
        #expect(pending.errors.contains("--pending-only: no record has the field cloudStatus (--status-field)"), "\(pending.errors)")
    }

    @Test func aCachesStatusPropertyIsTheOneNamed() throws {
        let scratch = try Scratch()
        let wanted = try ferry(["copy", Self.cache, "a.tar.gz", "--record-type", "Entity", "--pending-only", "--json", "-q"], in: scratch.path)
        #expect(wanted.status == 0, "\(wanted.errors)")
        let other = try ferry(
            ["copy", Self.cache, "b.tar.gz", "--record-type", "Entity", "--pending-only", "--status-field", "nope"], in: scratch.path)
        #expect(other.status == 64, "\(other.errors)")
        #expect(other.errors.contains("nope") && other.errors.contains("cloudStatus"), "the properties it has are named: \(other.errors)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("b.tar.gz")))
    }
}

/// Objects of a store that no entity reads are warnings naming their table and key, counted in the summary.
@Suite struct UncarriedObjectCommandTests {
    private func lines(_ output: String) throws -> [JSONObject] {
        try output.split(separator: "\n").compactMap { try JSONParser.parse(String($0)).objectValue }
    }

    @Test(arguments: [
        ("UPDATE ZCAR SET Z_ENT = 99 WHERE Z_PK = 1", 1, "ZCAR Z_PK 1: Z_ENT 99 is no entity of Z_PRIMARYKEY"),
        ("DROP TABLE ZNOTE", 1, "ZNOTE: entity Note (Z_ENT 4) has no table in the store"),
        ("DELETE FROM Z_PRIMARYKEY", 14, "Z_PRIMARYKEY is empty"),
    ])
    func dumpAndCopyNameWhatTheyLeaveOut(statement: String, missing: Int, message: String) throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try Sample.storeCopy(editedBy: statement)
        let store = "store/CarsTrucksBuses.sqlite"
        let dump = try ferry(["dump", store, "--json"], in: scratch.path)
        #expect(dump.status == 0, "\(dump.errors)")
        let output = try lines(dump.output)
        let warnings = output.filter { $0["message_type"] == "warning" }.compactMap { $0["message"]?.stringValue }
        #expect(warnings.contains { $0.contains(message) }, "\(warnings)")
        let summary = output.last { $0["message_type"] == "summary" }
        #expect(summary?["not_carried"]?.int64Value == Int64(message.contains("no table") ? 1 : missing), "\(dump.output.suffix(400))")
        let text = try ferry(["dump", store], in: scratch.path)
        #expect(text.errors.contains("not carried"), "\(text.errors)")
        for target in ["out.tar.gz", "out.ferry"] {
            let copy = try ferry(["copy", store, target, "--json"], in: scratch.path)
            #expect(copy.status == 0, "\(copy.errors)")
            let copied = try lines(copy.output)
            #expect(copied.contains { $0["message_type"] == "warning" && $0["message"]?.stringValue?.contains(message) == true }, "\(target)")
            #expect((copied.last { $0["message_type"] == "summary" }?["warnings"]?.int64Value ?? 0) >= 1, "\(target)")
        }
    }
}

/// Ctrl-C on a copy into a local store says what the store kept and that the same command resumes.
@Suite struct InterruptedLocalCopyCommandTests {
    @Test func saysHowFarItGotAndThatTheSameCommandResumes() throws {
        let scratch = try Scratch()
        let fleet = TestRecords.fleet(vehicles: 1500, notesPerVehicle: 2)
        try TestBundles.write(fleet.map(RecordChange.record), to: scratch.file("fleet.tar.gz"))
        var interrupted = 0
        for attempt in 0..<8 where interrupted == 0 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.ferryBinary)
            process.arguments = ["copy", "fleet.tar.gz", "fleet-\(attempt).ferry", "--batch-size", "50"]
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            // Once the store exists the copy is under way (on a loaded machine it may take a while to start).
            for _ in 0..<200 where !FileManager.default.fileExists(atPath: scratch.file("fleet-\(attempt).ferry")) { usleep(10_000) }
            usleep(UInt32(50_000 + attempt * 40_000))
            process.interrupt()
            process.waitUntilExit()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            guard process.terminationStatus == 130 else { continue }
            interrupted += 1
            #expect(text.contains("of the source's changes are committed to fleet-\(attempt).ferry, which is kept"), "\(text)")
            #expect(text.contains("run the same command again to resume") && !text.contains("partial output removed"), "\(text)")
            let resumed = try ferry(["copy", "fleet.tar.gz", "fleet-\(attempt).ferry", "-q"], in: scratch.path)
            #expect(resumed.status == 0, "\(resumed.errors)")
        }
        #expect(interrupted > 0, "no interruption landed during a copy; the test proves nothing")
    }
}

/// Usage and output errors: the documented exit codes, and messages that say what is wrong with what the user gave.
@Suite struct UsageErrorCommandTests {
    @Test func aBareFerryOrHelpForNoCommandIsAUsageError() throws {
        let scratch = try Scratch()
        let bare = try ferry([], in: scratch.path)
        #expect(bare.status == 64 && bare.errors.contains("USAGE: ferry <subcommand>"), "\(bare.errors)")
        let nope = try ferry(["help", "nope"], in: scratch.path)
        #expect(nope.status == 64 && nope.errors.contains("no command nope") && nope.errors.contains("copy"), "\(nope.errors)")
        #expect(try ferry(["help", "copy"], in: scratch.path).status == 0)
        #expect(try ferry(["--version"], in: scratch.path).status == 0)
    }

    @Test func outputsThatCannotBeCreatedAre73NamingTheOutput() throws {
        let scratch = try Scratch()
        let arguments = ["pack", Sample.records, "--assets", Sample.assets, "-o"]
        for (output, reason) in [("/proc/x.tar.gz", "files cannot be created in /proc"), ("missing/x.tar.gz", "missing is not a directory")] {
            let result = try ferry(arguments + [output], in: scratch.path)
            #expect(result.status == 73, "\(output): \(result.errors)")
            #expect(result.errors.contains(reason) && !result.errors.contains(".partial:"), "\(result.errors)")
        }
        let file = try ferry(["pack", Sample.records, "--assets", Sample.records, "-o", "x.tar.gz"], in: scratch.path)
        #expect(file.status == 66 && file.errors.contains("--assets names a file"), "\(file.errors)")
    }

    @Test func verboseCopiesSayWhatTheyDo() throws {
        let scratch = try Scratch()
        let copy = try ferry(
            ["copy", TripwireCommandTests.cars, "v.ferry", "--batch-size", "5"], in: scratch.path, environment: ["FERRY_LOG_LEVEL": "debug"])
        #expect(copy.status == 0, "\(copy.errors)")
        for said in [
            "info", "source: ", "read as a Core Data store", "model: ", "xcdatamodeld", "target: v.ferry, a local store", "debug",
            "checkpoint: 10 of",
        ] {
            #expect(copy.errors.contains(said), "\(said): \(copy.errors)")
        }
        #expect(!copy.errors.contains("warning"), "a fitting model is no warning: \(copy.errors)")
        let quiet = try ferry(["copy", TripwireCommandTests.cars, "w.ferry"], in: scratch.path)
        #expect(!quiet.errors.contains("source: "), "\(quiet.errors)")
    }

    @Test func everyVerbsHelpHasExamplesAndTheRootNamesTheEnvironment() throws {
        let scratch = try Scratch()
        for verb in ["copy", "diff", "plan", "pack", "ls", "verify", "cat", "unpack", "convert", "inspect", "dump", "vacuum"] {
            let help = try ferry([verb, "--help"], in: scratch.path)
            #expect(help.status == 0 && help.output.contains("Examples:\n  ferry "), "\(verb): \(help.output)")
            let examples = help.output.components(separatedBy: "Examples:\n").last?.components(separatedBy: "\nUSAGE").first ?? ""
            #expect(examples.split(separator: "\n").allSatisfy { $0.hasPrefix("  ") && $0.count <= 80 }, "\(verb) examples wrap: \(examples)")
        }
        let copy = try ferry(["copy", "--help"], in: scratch.path)
        #expect(
            copy.output.contains("$FERRY_PRESET, else type-prefixed")
                && copy.output.contains("or\n                          nspersistentcloudkitcontainer"), "\(copy.output)")
        #expect(!copy.output.contains("Plist and keyed-archive caches:\n  --pending-only"), "--pending-only works for any source")
        let root = try ferry(["--help"], in: scratch.path)
        for name in ["FERRY_PRESET", "FERRY_LOG_LEVEL", "FERRY_LOCAL_STORE", "SOURCE_DATE_EPOCH", "--generate-completion-script"] {
            #expect(root.output.contains(name), "\(name)")
        }
        let completion = try ferry(["--generate-completion-script", "bash"], in: scratch.path)
        #expect(completion.status == 0 && completion.output.contains("ferry"))
        let level = try ferry(["ls", "x.tar.gz"], in: scratch.path, environment: ["FERRY_LOG_LEVEL": "bogus"])
        #expect(level.status == 64 && level.errors.contains("FERRY_LOG_LEVEL=bogus"), "\(level.errors)")
    }

    @Test func parserErrorsHaveThePrefixOfEveryOtherError() throws {
        let scratch = try Scratch()
        let missing = try ferry(["copy"], in: scratch.path)
        #expect(missing.status == 64 && missing.errors.hasPrefix("ferry: error: "), "\(missing.errors)")
        let bad = try ferry(["copy", "a", "b", "--batch-size", "0"], in: scratch.path)
        #expect(bad.status == 64 && bad.errors.hasPrefix("ferry: error: --batch-size must be at least 1"), "\(bad.errors)")
    }

    @Test func anUnknownPresetFromTheEnvironmentNamesTheVariable() throws {
        let scratch = try Scratch()
        let result = try ferry(["copy", TripwireCommandTests.cars, "x.tar.gz"], in: scratch.path, environment: ["FERRY_PRESET": "bogus"])
        #expect(result.status == 64 && result.errors.contains("FERRY_PRESET=bogus"), "\(result.errors)")
    }
}

/// A copy into a local store that fails leaves a new store absent and an existing one as it was; `verify` counts the
/// assets no record uses, and `vacuum` removes them.
@Suite struct FailedLocalCopyCommandTests {
    /// A bundle of records with four 1 MB assets of noise, cut short inside its assets (which follow the records).
    private func truncatedBundle(in scratch: Scratch) throws {
        var generator = SeededGenerator(seed: 32)
        let zone = ZoneID(zoneName: "PhotoZone")
        let changes = try (0..<4).map { index -> RecordChange in
            let asset = try TestBundles.storeAsset(generator.bytes(1 << 20), in: scratch.file("assets"))
            return .record(Record(recordType: "Photo", recordName: "Photo.\(index)", zoneID: zone, fields: ["image": .asset(asset)]))
        }
        try TestBundles.write(changes, to: scratch.file("good.tar.gz"), assetDirectory: scratch.file("assets"))
        let bytes = try scratch.read("good.tar.gz")
        try scratch.write("cut.tar.gz", bytes.prefix(bytes.count * 9 / 10))
    }

    private func summary(_ output: String) throws -> JSONObject? {
        try output.split(separator: "\n").map { try JSONParser.parse(String($0)).objectValue }.last { $0?["message_type"] == "summary" } ?? nil
    }

    @Test func aNewStoreIsRemovedAndAnExistingOneKeepsNoStrayAssets() throws {
        let scratch = try Scratch()
        try truncatedBundle(in: scratch)
        let fresh = try ferry(["copy", "cut.tar.gz", "new.ferry"], in: scratch.path)
        #expect(fresh.status == 65, "\(fresh.errors)")
        #expect(try scratch.listing().filter { $0.hasPrefix("new.ferry") }.isEmpty, "\(try scratch.listing())")
        // An existing store, without the sample's assets.
        let fleet = TestRecords.fleet(vehicles: 20, notesPerVehicle: 1)
        try TestBundles.write(fleet.map(RecordChange.record), to: scratch.file("fleet.tar.gz"))
        #expect(try ferry(["copy", "fleet.tar.gz", "old.ferry", "-q"], in: scratch.path).status == 0)
        let failed = try ferry(["copy", "cut.tar.gz", "old.ferry"], in: scratch.path)
        #expect(failed.status == 65, "\(failed.errors)")
        let verify = try ferry(["verify", "old.ferry", "--json"], in: scratch.path)
        #expect(verify.status == 0, "\(verify.errors)")
        #expect(try summary(verify.output)?["unreferenced_assets"] == 0, "\(verify.output)")
        let same = try ferry(["diff", "fleet.tar.gz", "old.ferry"], in: scratch.path)
        #expect(same.status == 0, "the store holds what it held: \(same.output)")
    }

    @Test func verifyCountsUnreferencedAssetsAndVacuumRemovesThem() throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try Scratch()
        #expect(try ferry(["copy", TripwireCommandTests.cars, "app.ferry", "-q"], in: scratch.path).status == 0)
        let digest = String(repeating: "ab", count: 32)
        try SQLiteShell.execute(
            scratch.file("app.ferry"),
            "INSERT INTO assets VALUES (x'\(digest)', 3, 1); INSERT INTO asset_chunks VALUES (x'\(digest)', 0, x'010203'); "
                + "INSERT INTO asset_chunks VALUES (x'\(String(repeating: "cd", count: 32))', 0, x'0405');")
        let verify = try ferry(["verify", "app.ferry", "--json"], in: scratch.path)
        #expect(verify.status == 0, "\(verify.errors)")
        #expect(try summary(verify.output)?["unreferenced_assets"] == 2 && summary(verify.output)?["unreferenced_asset_bytes"] == 5)
        #expect(verify.errors.contains("ferry vacuum app.ferry removes them"), "\(verify.errors)")
        let vacuum = try ferry(["vacuum", "app.ferry", "--compact", "--json"], in: scratch.path)
        #expect(vacuum.status == 0, "\(vacuum.errors)")
        #expect(try summary(vacuum.output)?["assets_removed"] == 2)
        let again = try ferry(["verify", "app.ferry", "--json"], in: scratch.path)
        #expect(try summary(again.output)?["unreferenced_assets"] == 0)
        // The assets records use are all still there.
        let diff = try ferry(["diff", TripwireCommandTests.cars, "app.ferry"], in: scratch.path)
        #expect(diff.status == 0, "\(diff.output)")
    }
}

/// An edited mapping plan is checked against its schema: mistakes are named with file, line and column.
@Suite struct MappingPlanCheckCommandTests {
    static let cars = TripwireCommandTests.cars

    /// The plan `ferry plan` writes for the sample store, with `edit` applied to its text.
    private func plan(_ scratch: Scratch, _ edit: (String) -> String) throws {
        let written = try ferry(["plan", Self.cars], in: scratch.path)
        #expect(written.status == 0, "\(written.errors)")
        try scratch.write("m.yaml", edit(written.output))
    }

    @Test(arguments: [
        (
            "    exclude: [\"recordID\", \"recordName\"]\n\n  # Car", "    nmae: {attribute: \"recordName\"}\n\n  # Car",
            "unknown key nmae in entities.Bus; did you mean name?"
        ),
        (
            "    exclude: [\"recordID\", \"recordName\"]\n\n  # Car", "    properties: {}\n\n  # Car",
            "unknown key properties in entities.Bus; did you mean fields?"
        ),
        (
            "    zone: \"BusZone\"\n", "    zone: \"BusZone\"\n    fields: {photo: {action: DELETE_EVERYTHING}}\n",
            "action must be one of NONE, DELETE_SELF, VALIDATE, not DELETE_EVERYTHING"
        ),
        (
            "    zone: \"BusZone\"\n", "    zone: \"BusZone\"\n    fields: {photo: {convert: nope}}\n",
            "convert must be one of string, double, bytes, rgba, not nope"
        ),
        ("    zone: \"BusZone\"\n", "    zone: \"BusZone\"\n    skip: maybe\n", "skip must be true or false, not maybe"),
        ("    zone: \"BusZone\"\n", "    zone: \"BusZone\"\n    zoneFrom: notes\n", "zoneFrom must be a list, such as [notes]"),
        ("separator: \".\"\n", "seperator: \".\"\n", "unknown key seperator in the plan; did you mean separator?"),
    ])
    func mistakesAreNamedWithTheirPlace(original: String, replacement: String, message: String) throws {
        let scratch = try Scratch()
        try plan(scratch) { text in
            #expect(text.contains(original), "the plan's text changed: \(original)")
            return text.replacingOccurrences(of: original, with: replacement)
        }
        let copy = try ferry(["copy", Self.cars, "out.tar.gz", "--mapping", "m.yaml"], in: scratch.path)
        #expect(copy.status == 78, "\(copy.errors)")
        #expect(copy.errors.contains(message), "\(copy.errors)")
        #expect(copy.errors.range(of: #"m\.yaml:\d+:\d+: "#, options: .regularExpression) != nil, "file:line:column: \(copy.errors)")
        #expect(!copy.errors.contains("DecodingError") && !copy.errors.contains("codingPath"), "\(copy.errors)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.gz")))
    }

    @Test func aPlanZoneThatKeptRecordIDsOverrideIsNamedOncePerEntity() throws {
        let scratch = try Scratch()
        try plan(scratch) { $0.replacingOccurrences(of: "    zone: \"BusZone\"\n", with: "    zone: \"Fleet\"\n") }
        let copy = try ferry(["copy", Self.cars, "out.tar.gz", "--mapping", "m.yaml", "--json"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        let notices = copy.errors.components(
            separatedBy: "entity Bus: 2 records keep the zone of their kept record ID (BusZone), not the plan's zone Fleet")
        #expect(notices.count == 2, "said once: \(copy.errors)")
        #expect(copy.errors.contains("leave name.archivedRecordID out of the plan"), "\(copy.errors)")
    }

    @Test func keysWithDefaultsMayBeLeftOutAndTheWrittenPlanIsValid() throws {
        let scratch = try Scratch()
        try plan(scratch) { $0.replacingOccurrences(of: "separator: \".\"\n", with: "") }
        let copy = try ferry(["copy", Self.cars, "a.tar.gz", "--mapping", "m.yaml", "-q", "--created-at", "2026-01-01T00:00:00Z"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        let preset = try ferry(["copy", Self.cars, "b.tar.gz", "-q", "--created-at", "2026-01-01T00:00:00Z"], in: scratch.path)
        #expect(preset.status == 0)
        #expect(try scratch.read("a.tar.gz") != Data() && ferry(["diff", "a.tar.gz", "b.tar.gz"], in: scratch.path).status == 0)
        // Every store's written plan, and every preset's, passes its own check.
        guard let fixtures = SharedFixtures.directory else { return }
        for store in SharedFixtures.coreDataStores {
            for preset in ["type-prefixed", "scorebook", "plain", "nspersistentcloudkitcontainer"] {
                let written = try ferry(["plan", "\(fixtures)/\(store)", "--preset", preset], in: scratch.path)
                try scratch.write("p.yaml", written.output)
                let dry = try ferry(["copy", "\(fixtures)/\(store)", "p.tar.gz", "--mapping", "p.yaml", "-n", "-q"], in: scratch.path)
                #expect(dry.status == 0, "\(store) \(preset): \(dry.errors)")
            }
        }
    }
}

/// What only CloudKit refuses from a client (a record name starting with `_`, which CloudKit gives user records) is
/// kept by bundles and local stores, with a warning: a backup never loses what the source holds.
@Suite struct ClientOnlyRulesCommandTests {
    @Test func aNameCloudKitMadeSurvivesStoreToBundleToLocalStore() throws {
        guard SQLiteShell.isAvailable else { return }
        // Car 1 named as CloudKit names a user record; two notes reference it.
        let name = "_" + String(repeating: "0123456789abcdef", count: 2)
        let scratch = try Sample.storeCopy(editedBy: "UPDATE ZCAR SET ZRECORDID = NULL, ZRECORDNAME = '\(name)' WHERE Z_PK = 1")
        let store = Sample.copiedStore
        let bundle = try ferry(["copy", store, "b.tar.gz", "--json"], in: scratch.path)
        #expect(bundle.status == 0, "\(bundle.errors)")
        #expect(bundle.errors.contains("CloudKit refuses it from a client"), "\(bundle.errors)")
        #expect(try ferry(["verify", "b.tar.gz"], in: scratch.path).status == 0)
        let local = try ferry(["copy", "b.tar.gz", "l.ferry", "--json"], in: scratch.path)
        #expect(local.status == 0, "\(local.errors)")
        #expect(local.errors.contains("CloudKit refuses it from a client"), "\(local.errors)")
        for other in ["b.tar.gz", "l.ferry"] {
            let diff = try ferry(["diff", store, other], in: scratch.path)
            #expect(diff.status == 0, "\(other): \(diff.output)")
        }
        let cat = try ferry(["cat", "b.tar.gz", "--type", "Note"], in: scratch.path)
        #expect(cat.output.components(separatedBy: name).count - 1 == 2, "both notes keep their reference: \(cat.output)")
    }
}

/// `inspect` describes a plist Ferry refuses, and says why with the exit code `convert` gives it.
@Suite struct InspectHostilePlistCommandTests {
    @Test func cyclesDepthAndOutOfRangeUIDsAreProblems() throws {
        let scratch = try Scratch()
        try scratch.write("cycle.plist", Data(HostilePlists.cycle()))
        try scratch.write("deep.plist", Data(HostilePlists.deepArrays(levels: 600)))
        var archive = KeyedArchiveBuilder()
        let root = archive.object("NSArray", fields: ["NS.objects": .array([.uid(99)])])
        try scratch.write("uid.archive", Data(archive.binary(root: root)))
        for (file, reason) in [
            ("cycle.plist", "containers form a cycle"), ("deep.plist", "more than the 512 Ferry reads"),
            ("uid.archive", "UID 99"),
        ] {
            let inspect = try ferry(["inspect", file], in: scratch.path)
            #expect(inspect.status == 65, "\(file): \(inspect.errors)")
            #expect(inspect.errors.contains(reason), "\(file): \(inspect.errors)")
            #expect(inspect.output.contains("objects"), "still described: \(inspect.output)")
            #expect(try ferry(["convert", file], in: scratch.path).status == 65, "convert agrees: \(file)")
        }
        try scratch.write("empty.sqlite", Data())
        let empty = try ferry(["inspect", "empty.sqlite"], in: scratch.path)
        #expect(empty.status == 65 && empty.errors.contains("the file is empty"), "\(empty.errors)")
    }
}

/// `diff` says what differs in a record, and when two sides were made with different presets.
@Suite struct DiffDetailCommandTests {
    @Test func namesTheFieldsThatDifferAndDifferentPresets() throws {
        guard SQLiteShell.isAvailable else { return }
        let scratch = try Sample.storeCopy()
        let store = Sample.copiedStore
        #expect(try ferry(["copy", store, "before.tar.gz", "-q"], in: scratch.path).status == 0)
        try SQLiteShell.execute(scratch.file(store), "UPDATE ZCAR SET ZNAME = 'Renamed' WHERE Z_PK = 1; PRAGMA wal_checkpoint(TRUNCATE);")
        let diff = try ferry(["diff", "before.tar.gz", store], in: scratch.path)
        #expect(diff.status == 1, "\(diff.errors)")
        #expect(diff.output.contains("differs (name ") && diff.output.contains("→ \"Renamed\")"), "\(diff.output)")
        let json = try ferry(["diff", "before.tar.gz", store, "--json"], in: scratch.path)
        #expect(json.output.contains(#""fields":[{"field":"name","first":"#), "\(json.output)")
        // A bundle made with another preset: said once, before the differences.
        #expect(try ferry(["copy", store, "scorebook.tar.gz", "--preset", "scorebook", "-q"], in: scratch.path).status == 0)
        let presets = try ferry(["diff", "scorebook.tar.gz", store], in: scratch.path)
        #expect(presets.errors.contains("scorebook.tar.gz was mapped with scorebook, \(store) with type-prefixed"), "\(presets.errors)")
        #expect(presets.errors.contains("give --preset scorebook to map the store as the other side was"), "\(presets.errors)")
        let same = try ferry(["diff", "scorebook.tar.gz", store, "--preset", "scorebook"], in: scratch.path)
        #expect(!same.errors.contains("was mapped with"), "\(same.errors)")
    }
}

/// Progress on a terminal has the total where it is known; off a terminal there is none.
@Suite struct ProgressCommandTests {
    @Test func aTerminalSeesTotalsAndPercentAndAPipeSeesNothing() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
        let scratch = try Scratch()
        let command = "'\(TestEnvironment.ferryBinary)' copy '\(TripwireCommandTests.cars)' t.ferry"
        // script(1) runs it on a pseudo-terminal, as a person would.
        let terminal = try ProcessResult.run("/usr/bin/script", ["-qec", command, "/dev/null"], in: scratch.path)
        #expect(terminal.status == 0, "\(terminal.output)")
        #expect(terminal.output.contains("t.ferry: 14 of 14 changes (99%)"), "\(terminal.output)")
        let piped = try ferry(["copy", TripwireCommandTests.cars, "p.ferry"], in: scratch.path)
        #expect(piped.status == 0 && !piped.errors.contains("\u{1B}[2K") && !piped.errors.contains("(99%)"), "\(piped.errors)")
    }
}
