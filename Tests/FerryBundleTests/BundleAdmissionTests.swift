import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// What a bundle writer works out when it is finished (duplicates, dependency order, dangling references, the
/// DELETE_SELF limit), in memory and with its ledger spilled to scratch files.
@Suite struct BundleAdmissionTests {
    /// Memory limits for the writer's ledger: everything in memory, and a few hundred entries per scratch run.
    static let limits = [8 << 20, 16 << 10]

    @Test(arguments: limits)
    func aBundleWithDuplicatesIsByteForByteTheBundleWithoutThem(limit: Int) throws {
        let scratch = try Scratch()
        let assets = scratch.file("assets")
        let ghostZone = ZoneID(zoneName: "GhostZone")
        let kept = Record(recordType: "Ghost", recordName: "Ghost.kept", zoneID: ghostZone, fields: ["boo": .int64(2)])
        let changes = try BundleRoundTripTests.changes(assets: assets) + [.record(kept)]
        // Later occurrences of names already used: one with a field and an asset no other record has, one of a type
        // with no other record in its zone, a repeated deletion, and the only deletion of a zone; what they brought
        // (a field, an asset, a record file, a deletions file) must leave with them.
        let extra = try TestBundles.storeAsset(Data("only the duplicate has this".utf8), in: assets, fileName: "extra.bin")
        guard case .record(var richer) = changes[0] else {
            Issue.record("the first change is not a record")
            return
        }
        richer.fields["onlyHere"] = .asset(extra)
        let ghost = Record(recordType: "Ghost", recordName: richer.recordName, zoneID: richer.zoneID, fields: ["boo": .int64(1)])
        guard let deletion = changes.last(where: \.isDeletion) else {
            Issue.record("no deletion")
            return
        }
        var repeated = changes
        repeated.insert(.record(richer), at: 3)
        repeated.append(.record(ghost))
        repeated.append(deletion)
        let lastDeletion = RecordChange.deletion(Deletion(recordType: "Ghost", recordName: kept.recordName, zoneID: ghostZone))
        repeated.append(lastDeletion)

        var rejected: [DeferredProblem] = []
        func write(_ changes: [RecordChange], to name: String) throws -> BundleSummary {
            var options = BundleWriter.Options(source: .init(kind: "test", description: "TestBundles"))
            options.softwareAgent = "ferry-tests"
            options.admissionMemoryLimit = limit
            options.temporaryDirectory = scratch.file("tmp")
            let writer = try BundleWriter(path: scratch.file(name), options: options, assets: try DirectoryAssetProvider(root: assets))
            for change in changes {
                guard case .accepted = try writer.add(change) else { throw CoreError(.readFailed, "\(change.recordName) rejected by add") }
            }
            return try writer.finish(createdAt: TestBundles.createdAt, found: { rejected.append($0) })
        }
        // The same file name in two directories: the name is the bag's top directory.
        for directory in ["tmp", "clean", "repeated"] {
            try FileManager.default.createDirectory(atPath: scratch.file(directory), withIntermediateDirectories: true)
        }
        let clean = try write(changes, to: "clean/b.tar.gz")
        let summary = try write(repeated, to: "repeated/b.tar.gz")
        let identical = try scratch.read("clean/b.tar.gz") == scratch.read("repeated/b.tar.gz")
        #expect(identical, "the duplicates' field, asset or type is still in the bundle")
        #expect(clean.rejectedAtFinish == 0 && summary.rejectedAtFinish == 4)
        rejected.sort { $0.origin < $1.origin }
        #expect(rejected.map(\.origin) == [4] + (repeated.count - 2...repeated.count).map(Int64.init))
        #expect(
            rejected.map(\.change.canonicalJSON)
                == [.record(richer), .record(ghost), deletion, lastDeletion].map(\.canonicalJSON))
        #expect(rejected.allSatisfy { $0.problem.rule == .duplicate && $0.problem.message.contains("appears more than once") })
        #expect(scratch.listing().filter { $0.hasPrefix("tmp/") }.isEmpty, "scratch files are removed")
        #expect(try BundleReader(path: scratch.file("repeated/b.tar.gz")).verify().isValid)
    }

    /// Records of five types in two zones drawn from a small pool of names (so some repeat), each referencing a few
    /// names of the pool (some never written), some with DELETE_SELF.
    private static func stream(count: Int, seed: UInt64) -> [RecordChange] {
        var generator = SeededGenerator(seed: seed)
        let zones = [ZoneID(zoneName: "A"), ZoneID(zoneName: "B", ownerName: "_someone")]
        func name() -> (String, ZoneID) { ("r\(generator.next() % UInt64(count))", zones[Int(generator.next() % 2)]) }
        return (0..<count).map { _ in
            let (recordName, zone) = name()
            if generator.next() % 20 == 0 {
                return .deletion(Deletion(recordType: "T\(generator.next() % 5)", recordName: recordName, zoneID: zone))
            }
            var fields = RecordFields()
            for index in 0..<Int(generator.next() % 4) {
                let (target, _) = name()
                let action: Reference.Action = generator.next() % 3 == 0 ? .none : .deleteSelf
                let reference = Reference(recordName: generator.next() % 7 == 0 ? "missing-\(target)" : target, zoneID: zone, action: action)
                fields["ref\(index)"] =
                    index == 2
                    ? FieldList(.reference, [.reference(reference), .reference(reference)]).map(FieldValue.list) ?? .int64(0)
                    : .reference(reference)
            }
            return .record(Record(recordType: "T\(generator.next() % 5)", recordName: recordName, zoneID: zone, fields: fields))
        }
    }

    @Test(arguments: limits)
    func findsWhatInMemoryTablesFind(limit: Int) throws {
        let scratch = try Scratch()
        let changes = Self.stream(count: 3000, seed: UInt64(limit))
        let deleteSelfLimit = 4
        // The answer of tables in memory, record by record (what the writer used before its ledger).
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.admissionMemoryLimit = limit
        options.validator.limits.maxDeleteSelfReferencesPerTarget = deleteSelfLimit
        options.temporaryDirectory = scratch.path
        options.dryRun = true
        let writer = try BundleWriter(path: scratch.file("b.tar.gz"), options: options, assets: nil)
        var graph = InMemoryRecordGraph(deleteSelfLimit: deleteSelfLimit)
        var accepted = 0
        var duplicates: [Int64] = []
        var overflows: [Int64] = []
        for (index, change) in changes.enumerated() {
            guard case .accepted = try writer.add(change) else { continue }
            accepted += 1
            guard graph.register(change.id, type: change.recordType) else {
                duplicates.append(Int64(index + 1))
                continue
            }
            guard case .record(let record) = change else { continue }
            graph.addReferences(from: record.recordType, to: record.fields.flatMap { $0.value.references.map(\.target) })
            record.forEachDeleteSelfReference { field, reference in
                if graph.countDeleteSelfReference(to: RecordKey(reference.target)) { overflows.append(Int64(index + 1)) }
            }
        }
        var found: [DeferredProblem] = []
        let summary = try writer.finish(createdAt: TestBundles.createdAt, found: { found.append($0) })
        let ordering = graph.ordering()
        #expect(accepted > changes.count * 9 / 10, "most changes pass the per-record checks")
        #expect(!duplicates.isEmpty && !overflows.isEmpty && ordering.danglingReferences > 0 && !ordering.cycles.isEmpty)
        #expect(found.filter { $0.problem.rule == .duplicate }.map(\.origin).sorted() == duplicates)
        #expect(found.filter { $0.problem.rule == .deleteSelfLimit }.map(\.origin) == overflows)
        #expect(summary.rejectedAtFinish == duplicates.count && summary.warningsAtFinish == overflows.count)
        #expect(summary.manifest.recordTypeOrder == ordering.order)
        #expect(summary.manifest.dependencyCycles == ordering.cycles)
        #expect(summary.danglingReferences == ordering.danglingReferences)
        #expect(summary.manifest.recordCount + summary.manifest.deletionCount == accepted - duplicates.count)
        #expect(scratch.listing().isEmpty, "scratch files are removed")
    }
}
