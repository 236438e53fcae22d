import FerryCore
import FerryJSON
import FerryRecords
import FerryTesting
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry copy` into and out of local stores, and `ferry diff`, through the built binary.
@Suite struct LocalStoreCommandTests {
    static let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"

    private func messages(_ output: String) throws -> [JSONObject] {
        try output.split(separator: "\n").compactMap { try JSONParser.parse(String($0)).objectValue }
    }

    private func summary(_ output: String) throws -> JSONObject {
        try #require(try messages(output).last { $0["message_type"] == "summary" })
    }

    private func outcomes(_ output: String) throws -> [String: String] {
        var found: [String: String] = [:]
        for message in try messages(output) where message["message_type"] == "record" {
            if let name = message["record_name"]?.stringValue, let outcome = message["outcome"]?.stringValue { found[name] = outcome }
        }
        return found
    }

    @Test func storeToLocalToBundleToLocalLosesNothing() throws {
        let scratch = try Scratch()
        let first = try ferry(["copy", Self.cars, "a.ferry", "--json"], in: scratch.path)
        #expect(first.status == 0, "\(first.errors)")
        let counts = try summary(first.output)
        // The tombstone deletes a record the new store never had: absent, not unchanged.
        #expect(counts["created"] == 13 && counts["absent"] == 1 && counts["unchanged"] == 0 && counts["assets"] == 2 && counts["zones_created"] == 3)
        let again = try ferry(["copy", Self.cars, "a.ferry", "--json"], in: scratch.path)
        #expect(try summary(again.output)["unchanged"] == 13 && summary(again.output)["absent"] == 1, "a second copy writes nothing")
        #expect(try outcomes(again.output).values.allSatisfy { $0 == "unchanged" || $0 == "absent" })
        for step in [["copy", "a.ferry", "b.tar.zst", "-q"], ["copy", "b.tar.zst", "c.ferry", "-q"], ["verify", "b.tar.zst", "-q"]] {
            let result = try ferry(step, in: scratch.path)
            #expect(result.status == 0, "\(step): \(result.errors)")
        }
        for (left, right) in [("a.ferry", "c.ferry"), ("c.ferry", "b.tar.zst"), (Self.cars, "c.ferry")] {
            let diff = try ferry(["diff", left, right, "--json"], in: scratch.path)
            #expect(diff.status == 0, "\(left) vs \(right): \(diff.output)")
            #expect(try summary(diff.output)["same"] == 13)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
        #expect(files == ["a.ferry", "b.tar.zst", "c.ferry"], "stores are closed cleanly, sources left as they were")
    }

    @Test func aSecondWriterIsRefusedWhileTheFirstCopies() throws {
        let scratch = try Scratch()
        // This process stands for a copy under way: it holds the store's lock.
        let lock = try #require(try FileLock.acquire(path: scratch.file("a.ferry-lock")))
        let refused = try ferry(["copy", Self.cars, "a.ferry"], in: scratch.path)
        #expect(refused.status == 75, "\(refused.errors)")
        #expect(refused.errors.contains("a.ferry: another ferry (process \(getpid())) is writing this store; run again when it has finished"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("a.ferry")), "nothing created")
        lock.release()
        let copy = try ferry(["copy", Self.cars, "a.ferry", "-q"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["a.ferry"], "the lock file goes with the lock")
    }

    @Test func dryRunCountsExactlyAndWritesNothing() throws {
        let scratch = try Scratch()
        let dry = try ferry(["copy", Self.cars, "a.ferry", "-n", "--json"], in: scratch.path)
        #expect(dry.status == 0, "\(dry.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        let real = try ferry(["copy", Self.cars, "a.ferry", "--json"], in: scratch.path)
        var dryCounts = try summary(dry.output)
        var realCounts = try summary(real.output)
        for key in ["seconds", "dry_run"] {
            dryCounts[key] = nil
            realCounts[key] = nil
        }
        #expect(dryCounts == realCounts)
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.file("a.ferry")))
        let plain = try ferry(["copy", Self.cars, "a.ferry", "--preset", "plain", "-n", "--json"], in: scratch.path)
        #expect(try summary(plain.output)["created"] == 14, "a dry run against an existing store counts against it")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.file("a.ferry"))) == before)
    }

    @Test func diffReportsWhatDiffers() throws {
        let scratch = try Scratch()
        _ = try ferry(["copy", Self.cars, "typed.ferry", "-q"], in: scratch.path)
        _ = try ferry(["copy", Self.cars, "plain.ferry", "--preset", "plain", "-q"], in: scratch.path)
        let diff = try ferry(["diff", "typed.ferry", "plain.ferry"], in: scratch.path)
        #expect(diff.status == 1)
        #expect(diff.output.contains("only in typed.ferry") && diff.output.contains("only in plain.ferry"))
        #expect(diff.output.contains("different: 0 same"))
    }

    /// A store holding fleet v1, then bundle v2 where Car 1 is newer and Car 2 older than in the store.
    private func conflictSetup(_ scratch: Scratch) throws -> (car1: String, car2: String) {
        let v1 = TestRecords.fleet(vehicles: 3, notesPerVehicle: 0, types: ["Car"])
        var v2 = v1
        v2[1].fields["name"] = .string("Car 1, repainted")
        v2[1].fields["lastUpdate"] = .timestamp(1_800_000_000_000)
        v2[2].fields["name"] = .string("Car 2, stale copy")
        v2[2].fields["lastUpdate"] = .timestamp(1_000_000_000_000)
        try TestBundles.write(v1.map(RecordChange.record), to: scratch.file("v1.tar.gz"))
        try TestBundles.write(v2.map(RecordChange.record), to: scratch.file("v2.tar.gz"))
        let seed = try ferry(["copy", "v1.tar.gz", "base.ferry", "-q"], in: scratch.path)
        #expect(seed.status == 0, "\(seed.errors)")
        return (v1[1].recordName, v1[2].recordName)
    }

    @Test func conflictPoliciesDecideBetweenVersions() throws {
        let scratch = try Scratch()
        let (car1, car2) = try conflictSetup(scratch)
        let expected: [(String, Int32, [String: String])] = [
            ("client-wins", 0, [car1: "updated", car2: "updated"]),
            ("server-wins", 0, [car1: "kept", car2: "kept"]),
            ("newer:lastUpdate", 0, [car1: "updated", car2: "kept"]),
        ]
        for (policy, status, outcomes) in expected {
            try FileManager.default.copyItem(atPath: scratch.file("base.ferry"), toPath: scratch.file("\(policy).ferry"))
            let copy = try ferry(["copy", "v2.tar.gz", "\(policy).ferry", "--on-conflict", policy, "--json"], in: scratch.path)
            #expect(copy.status == status, "\(policy): \(copy.errors)")
            let found = try self.outcomes(copy.output)
            #expect(found[car1] == outcomes[car1] && found[car2] == outcomes[car2], "\(policy): \(found)")
            #expect(found.values.filter { $0 == "unchanged" }.count == 1, "\(policy): Car 0 is the same in both")
        }
        try FileManager.default.copyItem(atPath: scratch.file("base.ferry"), toPath: scratch.file("fail.ferry"))
        let fail = try ferry(["copy", "v2.tar.gz", "fail.ferry", "--on-conflict", "fail", "--reject-file", "rejects.jsonl"], in: scratch.path)
        #expect(fail.status == 1, "\(fail.errors)")
        let rejects = try String(contentsOfFile: scratch.file("rejects.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(rejects.count == 2 && rejects.allSatisfy { $0.contains("CONFLICT") })
        let bad = try ferry(["copy", "v2.tar.gz", "x.ferry", "--on-conflict", "coin-toss"], in: scratch.path)
        #expect(bad.status == 64)
    }

    @Test func deletionsDeleteAndCascadeAlongDeleteSelf() throws {
        let scratch = try Scratch()
        let fleet = TestRecords.fleet(vehicles: 2, notesPerVehicle: 2, types: ["Car"])
        try TestBundles.write(fleet.map(RecordChange.record), to: scratch.file("fleet.tar.gz"))
        let car = fleet[0]
        let deletion = Deletion(recordType: car.recordType, recordName: car.recordName, zoneID: car.zoneID)
        try TestBundles.write([.deletion(deletion)], to: scratch.file("delete.tar.gz"))
        _ = try ferry(["copy", "fleet.tar.gz", "s.ferry", "-q"], in: scratch.path)
        let delete = try ferry(["copy", "delete.tar.gz", "s.ferry", "--json"], in: scratch.path)
        #expect(delete.status == 0, "\(delete.errors)")
        #expect(try outcomes(delete.output)[car.recordName] == "deleted")
        let out = try ferry(["copy", "s.ferry", "left.tar.gz", "--json", "-q"], in: scratch.path)
        #expect(try summary(out.output)["records"] == 3, "the car and its two DELETE_SELF notes are gone: \(out.output)")
    }

    @Test func aKeyedArchiveCacheCopiesItsPendingChanges() throws {
        let scratch = try Scratch()
        let cache = "\(TestEnvironment.packageRoot)/Samples/local-data-service/LocalEntities.archive"
        let seed = try ferry(["copy", cache, "app.ferry", "--record-type", "Entity", "--json"], in: scratch.path)
        #expect(seed.status == 0, "\(seed.errors)")
        #expect(try summary(seed.output)["created"] == 4, "four records; the deletion finds nothing to delete")
        let pending = try ferry(["copy", cache, "app.ferry", "--record-type", "Entity", "--pending-only", "--json"], in: scratch.path)
        #expect(pending.status == 0, "\(pending.errors)")
        let counts = try summary(pending.output)
        #expect(
            counts["read"] == 3 && counts["unchanged"] == 2 && counts["absent"] == 1,
            "only the pending objects are read (the deletion finds nothing to delete): \(pending.output)")
        let backup = try ferry(["copy", "app.ferry", "app.tar.gz", "-q"], in: scratch.path)
        #expect(backup.status == 0, "\(backup.errors)")
        let cat = try ferry(["cat", "app.tar.gz"], in: scratch.path)
        #expect(cat.output.contains("Entity.0E6F2A40-0000-4000-8000-000000000001") && cat.output.contains(#""zoneName":"LocalZone""#))
        #expect(cat.output.contains("Entity.6C1A0E22-5B3D-4F7E-9A10-2B3C4D5E6F70"), "the temporary ID names the new record")
        let notACache = try ferry(["copy", "app.tar.gz", "x.ferry"], in: scratch.path)
        #expect(notACache.status == 0)
        try scratch.write("junk.bin", "just bytes")
        let junk = try ferry(["copy", "junk.bin", "y.ferry"], in: scratch.path)
        #expect(junk.status == 65 && junk.errors.contains("junk.bin"), "\(junk.errors)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("y.ferry")))
    }

    @Test func pendingOnlyFollowsTheStatusField() throws {
        let scratch = try Scratch()
        var cars = TestRecords.fleet(vehicles: 3, notesPerVehicle: 0, types: ["Car"])
        try TestBundles.write(cars.map(RecordChange.record), to: scratch.file("all.tar.gz"))
        _ = try ferry(["copy", "all.tar.gz", "s.ferry", "-q"], in: scratch.path)
        for (index, status) in [0, 1, 2].enumerated() { cars[index].fields["syncStatus"] = .int64(Int64(status)) }
        cars[0].fields["name"] = .string("Car 0, new")
        try TestBundles.write(cars.map(RecordChange.record), to: scratch.file("flagged.tar.gz"))
        let copy = try ferry(
            ["copy", "flagged.tar.gz", "s.ferry", "--pending-only", "--status-field", "syncStatus", "--json"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        #expect(try outcomes(copy.output) == [cars[0].recordName: "updated", cars[2].recordName: "deleted"], "\(copy.output)")
        let out = try ferry(["copy", "s.ferry", "left.tar.gz", "-q"], in: scratch.path)
        #expect(out.status == 0)
        let cat = try ferry(["cat", "left.tar.gz"], in: scratch.path)
        #expect(!cat.output.contains("syncStatus"), "the status field is sync state, not data")
    }

    @Test func referenceCyclesAreWrittenInTwoSteps() throws {
        let scratch = try Scratch()
        let zone = ZoneID(zoneName: "People")
        let person = Record(
            recordType: "Person", recordName: "Person.1", zoneID: zone,
            fields: ["passport": .reference(Reference(recordName: "Passport.1", zoneID: zone, action: .validate)), "name": .string("Ada")])
        let passport = Record(
            recordType: "Passport", recordName: "Passport.1", zoneID: zone,
            fields: ["holder": .reference(Reference(recordName: "Person.1", zoneID: zone, action: .validate))])
        try TestBundles.write([.record(person), .record(passport)], to: scratch.file("cycle.tar.gz"))
        let copy = try ferry(["copy", "cycle.tar.gz", "people.ferry", "--json"], in: scratch.path)
        #expect(copy.status == 0, "\(copy.errors)")
        let counts = try summary(copy.output)
        #expect(counts["created"] == 2 && counts["patched"] == 1 && counts["rejected"] == 0, "\(copy.output)")
        #expect(try outcomes(copy.output).values.filter { $0 == "patched" }.count == 1, "the first of the two is completed at the end")
        let diff = try ferry(["diff", "cycle.tar.gz", "people.ferry"], in: scratch.path)
        #expect(diff.status == 0, "both records whole in the end: \(diff.output)")
        let again = try ferry(["copy", "cycle.tar.gz", "people.ferry", "--json"], in: scratch.path)
        #expect(try summary(again.output)["unchanged"] == 2)
    }

    @Test func killedCopiesResumeToTheSameResult() throws {
        let scratch = try Scratch()
        let fleet = TestRecords.fleet(vehicles: 1500, notesPerVehicle: 2)
        try TestBundles.write(fleet.map(RecordChange.record), to: scratch.file("fleet.tar.gz"))
        let reference = try ferry(["copy", "fleet.tar.gz", "reference.ferry", "-q"], in: scratch.path)
        #expect(reference.status == 0, "\(reference.errors)")
        var generator = SystemRandomNumberGenerator()
        var kills = 0
        var resumed = false
        // Scratch files go to a directory of the test's own, to see what the killed runs leave there.
        let temporary = scratch.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        var leftBehind: Set<String> = []
        for _ in 0..<12 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.ferryBinary)
            process.arguments = ["copy", "fleet.tar.gz", "killed.ferry", "--batch-size", "50"]
            process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary]) { $1 }
            process.currentDirectoryURL = URL(fileURLWithPath: scratch.path)
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 30_000...400_000, using: &generator))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kills += 1
            }
            process.waitUntilExit()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if text.contains("resuming an interrupted copy") { resumed = true }
            leftBehind.formUnion(try FileManager.default.contentsOfDirectory(atPath: temporary))
            if process.terminationReason == .exit, process.terminationStatus == 0 { break }
        }
        let beforeFinish = try FileManager.default.contentsOfDirectory(atPath: temporary)
        let finish = try ferry(["copy", "fleet.tar.gz", "killed.ferry", "--json", "-v"], in: scratch.path, environment: ["TMPDIR": temporary])
        #expect(finish.status == 0, "\(finish.errors)")
        // The killed runs' scratch directories are gone with the run that came after them, and so is its own.
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary).isEmpty, "left: \(leftBehind)")
        if beforeFinish.contains(where: { !$0.hasPrefix("ferry-run.") }) {
            #expect(finish.errors.contains("left by ferry runs that ended without cleaning up"), "\(finish.errors)")
        }
        #expect(try summary(finish.output)["read"]?.int64Value == Int64(fleet.count))
        // Whether a kill landed after a checkpoint depends on timing; LocalStoreImporterTests checks resuming exactly.
        _ = resumed
        #expect(kills > 0, "the copy was never interrupted; the test proves nothing")
        let diff = try ferry(["diff", "reference.ferry", "killed.ferry", "--json"], in: scratch.path)
        #expect(diff.status == 0, "\(diff.output)")
        #expect(try summary(diff.output)["same"]?.int64Value == Int64(fleet.count), "no duplicates, no losses")
    }
}
