import FerryBundle
import FerryCore
import FerryJSON
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct BundleRoundTripTests {
    /// A small fleet, a record of every type with assets, and deletions, in scrambled order.
    static func changes(assets: String) throws -> [RecordChange] {
        let photo = try TestBundles.storeAsset(Data("JPEG bytes".utf8), in: assets, fileName: "beetle.jpg")
        var records = TestRecords.fleet(vehicles: 3, notesPerVehicle: 2)
        records[0].fields["photo"] = .asset(photo)
        records.append(TestRecords.everyType(asset: photo))
        var changes = records.reversed().map(RecordChange.record)
        changes.append(.deletion(Deletion(recordType: "Car", recordName: "Car.gone", zoneID: ZoneID(zoneName: "CarZone"))))
        changes.append(.deletion(Deletion(recordType: "Note", recordName: "Note.gone", zoneID: ZoneID(zoneName: "BusZone"))))
        return changes
    }

    /// ``changes(assets:)`` and a truck whose manual is `text`, an asset large enough to span many compression chunks.
    static func changes(assets: String, manual text: Data) throws -> (changes: [RecordChange], manual: Asset) {
        var changes = try Self.changes(assets: assets)
        let manual = try TestBundles.storeAsset(text, in: assets, fileName: "manual.txt")
        var truck = TestRecords.vehicle("Truck", index: 99)
        truck.fields["manual"] = .asset(manual)
        changes.append(.record(truck))
        return (changes, manual)
    }

    @Test(arguments: ArchiveFormat.allCases)
    func writesAndReadsBackEveryRecordByteForByte(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        let changes = try Self.changes(assets: scratch.file("assets"))
        let path = scratch.file("backup.\(format.rawValue)")
        let summary = try TestBundles.write(changes, to: path, assetDirectory: scratch.file("assets"))
        #expect(summary.format == format)
        #expect(summary.manifest.recordCount == changes.count - 2)
        #expect(summary.manifest.deletionCount == 2)
        #expect(summary.manifest.assetCount == 1)

        let reader = try BundleReader(path: path)
        var lines: [[UInt8]] = []
        try reader.forEachChangeLine { lines.append(Array($0)) }
        #expect(Set(lines) == Set(changes.map(\.canonicalJSON)))
        #expect(lines.count == changes.count)
        let report = try reader.verify()
        #expect(report.isValid, "\(report.issues)")
        #expect(report.recordsChecked == changes.count - 2)
        #expect(report.assetsChecked == 1)
    }

    @Test func ordersRecordTypesParentsFirstAndDeletionsLast() throws {
        let scratch = try Scratch()
        let path = scratch.file("b.tar.gz")
        try TestBundles.write(try Self.changes(assets: scratch.file("assets")), to: path, assetDirectory: scratch.file("assets"))
        let reader = try BundleReader(path: path)
        #expect(reader.manifest.recordTypeOrder == ["Bus", "Car", "Everything", "Truck", "Note"])
        var types: [String] = []
        try reader.forEachChange { change in
            let label = change.isDeletion ? "-" : change.recordType
            if types.last != label { types.append(label) }
        }
        #expect(types == ["Bus", "Car", "Everything", "Truck", "Note", "-"])
    }

    @Test(arguments: ArchiveFormat.allCases)
    func isDeterministic(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        let changes = try Self.changes(assets: scratch.file("assets"))
        try FileManager.default.createDirectory(atPath: scratch.file("one"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.file("two"), withIntermediateDirectories: true)
        try TestBundles.write(changes, to: scratch.file("one/b.\(format.rawValue)"), assetDirectory: scratch.file("assets"))
        Thread.sleep(forTimeInterval: 1.1)
        try TestBundles.write(changes, to: scratch.file("two/b.\(format.rawValue)"), assetDirectory: scratch.file("assets"))
        #expect(try scratch.read("one/b.\(format.rawValue)") == scratch.read("two/b.\(format.rawValue)"))
    }

    /// Zstandard's multi-threaded output does not depend on the number of workers.
    ///
    /// So a bundle written on a two-core laptop and on a build server is the same file. The payload spans several
    /// compression jobs.
    @Test func zstdBundlesDoNotDependOnTheThreadCount() throws {
        let scratch = try Scratch()
        let text = TestBundles.compressibleText(count: 6 << 20, seed: 7)
        let (changes, _) = try Self.changes(assets: scratch.file("assets"), manual: text)
        var files: [[UInt8]] = []
        for threads in [1, 2, 5] {
            let path = scratch.file("\(threads)/b.tar.zst")
            try FileManager.default.createDirectory(atPath: scratch.file("\(threads)"), withIntermediateDirectories: true)
            let summary = try TestBundles.write(changes, to: path, assetDirectory: scratch.file("assets"), zstdWorkers: threads)
            #expect(summary.payloadBytes > 4 << 20, "the payload should span several 1 MiB zstd jobs")
            files.append([UInt8](try scratch.read("\(threads)/b.tar.zst")))
        }
        // Not inside #expect, which would print two 5 MB arrays on failure.
        let identical = files.allSatisfy { $0 == files[0] }
        #expect(identical, "the bundles written with 1, 2 and 5 zstd threads differ")
    }

    @Test func selectsByTypeAndZone() throws {
        let scratch = try Scratch()
        let path = scratch.file("b.tar.zst")
        try TestBundles.write(try Self.changes(assets: scratch.file("assets")), to: path, assetDirectory: scratch.file("assets"))
        let reader = try BundleReader(path: path)
        var notesInCarZone: [RecordChange] = []
        try reader.forEachChange(.init(recordTypes: ["Note"], zoneNames: ["CarZone"])) { notesInCarZone.append($0) }
        #expect(notesInCarZone.count == 6)
        #expect(notesInCarZone.allSatisfy { $0.recordType == "Note" && $0.zoneID.zoneName == "CarZone" })
        var deletedNotes: [RecordChange] = []
        try reader.forEachChange(.init(recordTypes: ["Note"], zoneNames: ["BusZone"])) { deletedNotes.append($0) }
        #expect(deletedNotes.filter(\.isDeletion).map(\.recordName) == ["Note.gone"])
    }

    @Test func listsEveryPayloadFileInTheManifestSortedByPath() throws {
        let scratch = try Scratch()
        try TestBundles.write(try Self.changes(assets: scratch.file("assets")), to: scratch.file("b.tar.gz"), assetDirectory: scratch.file("assets"))
        try BundleReader(path: scratch.file("b.tar.gz")).extract(to: scratch.file("bag"))
        let lines = String(decoding: try scratch.read("bag/manifest-sha256.txt"), as: UTF8.self).split(separator: "\n")
        let paths = lines.map { String($0.dropFirst(66)) }
        #expect(paths.contains { $0.hasPrefix("data/assets/") } && paths.contains { $0.hasPrefix("data/deletions/") })
        #expect(paths == paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        func isFile(_ path: String) -> Bool {
            var directory: ObjCBool = false
            return FileManager.default.fileExists(atPath: scratch.file("bag/\(path)"), isDirectory: &directory) && !directory.boolValue
        }
        let payload = (FileManager.default.enumerator(atPath: scratch.file("bag/data"))?.allObjects as? [String] ?? []).map { "data/\($0)" }
            .filter(isFile)
        #expect(Set(paths) == Set(payload))
    }

    @Test func readsManifestAndSchemaEntryByEntryAsTheirTreesWouldRead() throws {
        let scratch = try Scratch()
        try TestBundles.write(try Self.changes(assets: scratch.file("assets")), to: scratch.file("b.tar.gz"), assetDirectory: scratch.file("assets"))
        try BundleReader(path: scratch.file("b.tar.gz")).extract(to: scratch.file("bag"))
        let manifest = [UInt8](try scratch.read("bag/data/manifest.json"))
        let schema = [UInt8](try scratch.read("bag/data/schema.json"))
        #expect(try BundleManifest(bytes: manifest) == BundleManifest(json: JSONParser.parse(manifest)))
        #expect(try RecordSchema(bytes: schema) == RecordSchema(json: JSONParser.parse(schema)))
        #expect(try !RecordSchema(bytes: schema).zones.isEmpty)
        // A key twice is refused, as the parser refuses it.
        #expect(throws: JSONSyntaxError.self) { try BundleManifest(bytes: Array(#"{"files": [], "files": []}"#.utf8)) }
        #expect(throws: JSONSyntaxError.self) { try RecordSchema(bytes: Array(#"{"zones": [], "zones": []}"#.utf8)) }
    }

    @Test func keepsEveryRecordInItsFileWhenThereAreMoreFilesThanOpenSpoolFiles() throws {
        let scratch = try Scratch()
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = .tarZstd
        let path = scratch.file("zones.tar.zst")
        let writer = try BundleWriter(path: path, options: options, assets: nil)
        // 300 zones, records arriving round-robin: far more spool files than stay open, each reopened many times.
        let zones = (0..<300).map { ZoneID(zoneName: "Zone\($0)") }
        for index in 0..<3000 {
            let record = Record(
                recordType: "Note", recordName: "Note.\(index)", zoneID: zones[index % zones.count], fields: ["n": .int64(Int64(index))])
            #expect(try writer.add(.record(record)) == .accepted(warnings: []))
        }
        let summary = try writer.finish(createdAt: TestBundles.createdAt)
        #expect(summary.manifest.files.count == 300)
        #expect(try summary.manifest.files.all().allSatisfy { $0.count == 10 })
        var seen: [String: [Int64]] = [:]
        try BundleReader(path: path).forEachChange(.init()) { change in
            guard case .record(let record) = change, case .int64(let number)? = record.fields["n"] else { return }
            #expect(Int(number) % zones.count == Int(record.zoneID.zoneName.dropFirst(4)))
            seen[record.zoneID.zoneName, default: []].append(number)
        }
        #expect(seen.count == 300)
        #expect(seen.values.allSatisfy { $0 == $0.sorted() && $0.count == 10 }, "each file in the order its records came")
    }

    @Test func rejectsDuplicatesConflictsAndMissingAssetsButKeepsTheRest() throws {
        let scratch = try Scratch()
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = .tarGzip
        let writer = try BundleWriter(path: scratch.file("b.tar.gz"), options: options, assets: nil)
        let car = TestRecords.vehicle("Car", index: 1)
        #expect(try writer.add(.record(car)) == .accepted(warnings: []))
        // A repeated name is found when the bundle is finished (the identities are sorted on disk, not kept in memory).
        #expect(try writer.add(.record(car)) == .accepted(warnings: []))
        var retyped = TestRecords.vehicle("Car", index: 2)
        retyped.fields["mileage"] = .string("far")
        guard case .rejected(let conflict) = try writer.add(.record(retyped)) else { Issue.record("type change accepted"); return }
        #expect(conflict.map(\.rule) == [.fieldType])
        let withAsset = TestRecords.vehicle("Car", index: 3, photo: Asset(sha256: .zero, size: 3))
        guard case .rejected(let missing) = try writer.add(.record(withAsset)) else { Issue.record("missing asset accepted"); return }
        #expect(missing.map(\.rule) == [.asset])
        var found: [DeferredProblem] = []
        let summary = try writer.finish(createdAt: TestBundles.createdAt, found: { found.append($0) })
        #expect(summary.manifest.recordCount == 1)
        #expect(summary.rejectedAtFinish == 1)
        #expect(found.map(\.problem.rule) == [.duplicate])
        #expect(found.map(\.origin) == [2], "named by its number among the changes added")
        #expect(found.first?.change.recordName == car.recordName)
    }

    @Test func warnsOnceATargetHasMoreThanSevenHundredFiftyDeleteSelfReferences() throws {
        let scratch = try Scratch()
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = .tarGzip
        let writer = try BundleWriter(path: scratch.file("b.tar.gz"), options: options, assets: nil)
        let zone = ZoneID(zoneName: "CarZone")
        let parent = Reference(recordName: "Car.1", zoneID: zone, action: .deleteSelf)
        for index in 0..<760 {
            // Half the children point at the parent in a single reference, half from a list.
            let value: FieldValue =
                index.isMultiple(of: 2) ? .reference(parent) : FieldList(.reference, [.reference(parent)]).map(FieldValue.list) ?? .int64(0)
            let note = Record(
                recordType: "Note", recordName: "Note.\(index)", zoneID: zone, fields: [index.isMultiple(of: 2) ? "car" : "cars": value])
            // Origins count from 10: the warning names the one given with the 751st reference.
            #expect(try writer.add(.record(note), origin: Int64(10 + index)) == .accepted(warnings: []))
        }
        var warnings: [DeferredProblem] = []
        let summary = try writer.finish(createdAt: TestBundles.createdAt, found: { warnings.append($0) })
        #expect(summary.warningsAtFinish == 1)
        #expect(warnings.map(\.problem.rule) == [.deleteSelfLimit])
        #expect(warnings.map(\.origin) == [760])
        #expect(warnings.first?.change.recordName == "Note.750")
        #expect(warnings.first?.problem.path == "fields.car")
        #expect(warnings.first?.problem.message.contains("Car.1") == true, "\(warnings)")
    }

    @Test func verifyWarnsOnceATargetHasMoreThanSevenHundredFiftyDeleteSelfReferences() throws {
        let scratch = try Scratch()
        let zone = ZoneID(zoneName: "CarZone")
        let car = Record(recordType: "Car", recordName: "Car.1", zoneID: zone, fields: ["name": .string("Car 1")])
        let parent = Reference(recordName: car.recordName, zoneID: zone, action: .deleteSelf)
        var changes: [RecordChange] = [.record(car)]
        for index in 0..<760 {
            // The warning comes with the 751st reference, which is in a list.
            let value: FieldValue = index == 750 ? FieldList(.reference, [.reference(parent)]).map(FieldValue.list) ?? .int64(0) : .reference(parent)
            changes.append(
                .record(Record(recordType: "Note", recordName: "Note.\(index)", zoneID: zone, fields: [index == 750 ? "cars" : "car": value])))
        }
        try TestBundles.write(changes, to: scratch.file("b.tar.gz"))
        let report = try BundleReader(path: scratch.file("b.tar.gz")).verify()
        #expect(report.isValid)
        #expect(report.recordsChecked == 761)
        #expect(report.warnings.count == 1)
        #expect(report.warnings.first?.contains("fields.cars") == true, "\(report.warnings)")
        #expect(report.warnings.first?.contains("CarZone/Car.1") == true, "\(report.warnings)")
    }

    @Test func dryRunWritesNothingAndCountsTheSame() throws {
        let scratch = try Scratch()
        let changes = try Self.changes(assets: scratch.file("assets"))
        var options = BundleWriter.Options(source: .init(kind: "test", description: "TestBundles"))
        options.softwareAgent = "ferry-tests"
        options.dryRun = true
        options.temporaryDirectory = scratch.path
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"))
        let writer = try BundleWriter(path: scratch.file("dry.tar.gz"), options: options, assets: provider)
        for change in changes { try writer.add(change) }
        let dry = try writer.finish(createdAt: TestBundles.createdAt)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("dry.tar.gz")))
        #expect(scratch.listing().allSatisfy { $0.hasPrefix("assets") })
        let real = try TestBundles.write(changes, to: scratch.file("real.tar.gz"), assetDirectory: scratch.file("assets"))
        #expect(dry.manifest.files == real.manifest.files)
        #expect(dry.payloadBytes == real.payloadBytes)
        #expect(dry.dryRun && !real.dryRun)
    }

    @Test func extractsIntoANewDirectoryThatReadsAsABundle() throws {
        let scratch = try Scratch()
        let path = scratch.file("b.zip")
        try TestBundles.write(try Self.changes(assets: scratch.file("assets")), to: path, assetDirectory: scratch.file("assets"))
        let reader = try BundleReader(path: path)
        try reader.extract(to: scratch.file("restored"))
        let restored = try BundleReader(path: scratch.file("restored"))
        #expect(try restored.verify().isValid)
        #expect(restored.manifest == reader.manifest)
        #expect(throws: BundleError.self) { try reader.extract(to: scratch.file("restored")) }
        #expect(!scratch.listing().contains { $0.contains(".partial") })
    }
}
