import FerryBackend
import FerryCore
import FerryRecords
import FerryTesting
import FerryTransfer
import Foundation
import Testing

/// Copies through the backend contract, checked on every backend: idempotent re-copies, resume after a crash,
/// conflict policies, VALIDATE cycles, deletions, assets, dry runs, parallel zones, throttling.
@Suite struct CopyConformanceTests {
    /// A fleet of vehicles in three zones with notes (DELETE_SELF), a photo asset on every fifth vehicle.
    func fleet(in scratch: Scratch, vehicles: Int = 30) throws -> (changes: [RecordChange], assets: DirectoryAssetProvider) {
        let directory = scratch.file("assets")
        var records: [Record] = []
        for index in 0..<vehicles {
            let type = ["Car", "Truck", "Bus"][index % 3]
            let photo =
                index % 5 == 0
                ? try TestBundles.storeAsset(TestBundles.compressibleText(count: 3000 + index, seed: UInt64(index)), in: directory) : nil
            let vehicle = TestRecords.vehicle(type, index: index, photo: photo)
            records.append(vehicle)
            records.append(TestRecords.note(index, parent: vehicle))
        }
        return (records.map { .record($0) }, try DirectoryAssetProvider(root: directory))
    }

    /// Checks that every asset the changes use is in `store`, byte for byte as `provider` gives it.
    func expectAssets(of changes: [RecordChange], from provider: DirectoryAssetProvider, in store: any RecordStore) async throws {
        for case .record(let record) in changes {
            for asset in record.fields.flatMap(\.value.assets) {
                let reader = try provider.open(asset)
                var expected = [UInt8](repeating: 0, count: Int(asset.size))
                _ = try expected.withUnsafeMutableBytes { try reader.read(filling: $0) }
                #expect(try await store.assetBytes(asset).collected() == expected)
            }
        }
    }

    func copy(
        _ source: any ChangeSource, into backend: OpenBackend, _ configure: (inout RecordCopier.Options) -> Void = { _ in }
    ) async throws -> (TransferTally, [TransferOutcome]) {
        var options = RecordCopier.Options()
        options.batchSize = 7
        configure(&options)
        var outcomes: [TransferOutcome] = []
        let tally = try await RecordCopier(source: source, target: backend.store, journal: backend.journal, options: options).run { _, outcome in
            outcomes.append(outcome)
        }
        return (tally, outcomes)
    }

    /// A record named again in a later round of a first copy meets its first version (a bulk-creating backend, which
    /// writes into an empty zone without looking first, finds it there and looks).
    @Test(arguments: ConformanceBackend.allCases)
    func aRecordNamedAgainInALaterRoundMeetsItsFirstVersion(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let zone = ZoneID(zoneName: "Fresh")
        func car(_ name: String, _ text: String) -> RecordChange {
            .record(Record(recordType: "Car", recordName: name, zoneID: zone, fields: ["name": .string(text)]))
        }
        // The second version brings a photo: stored before the round's bulk write is refused, and counted.
        let scratch = try Scratch()
        let photo = try TestBundles.storeAsset(TestBundles.compressibleText(count: 2000, seed: 7), in: scratch.file("assets"))
        var second = Record(recordType: "Car", recordName: "a", zoneID: zone, fields: ["name": .string("second")])
        second.fields["photo"] = .asset(photo)
        let changes = [car("a", "first"), car("b", "b"), car("c", "c"), .record(second), car("d", "d"), car("c", "c")]
        let source = TestChangeSource(changes, assets: try DirectoryAssetProvider(root: scratch.file("assets")))
        let (tally, outcomes) = try await copy(source, into: backend) { $0.batchSize = 3 }
        #expect(outcomes == [.created, .created, .created, .updated, .created, .unchanged])
        #expect(tally.total.created == 4 && tally.zonesCreated == 1)
        #expect(tally.assets == 1 && tally.assetBytes == photo.size)
        let stored = try await backend.store.fetch([RecordID(recordName: "a", zoneID: zone)])
        #expect(stored.values.first?.fields["name"] == .string("second"))
    }

    @Test(arguments: ConformanceBackend.allCases)
    func aSecondCopyIsAllUnchangedAndWritesNothing(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let scratch = try Scratch()
        let (changes, assets) = try fleet(in: scratch)
        let (first, _) = try await copy(TestChangeSource(changes, assets: assets), into: backend)
        #expect(first.total.created == 60 && first.total.rejected == 0)
        #expect(first.assets == 6 && first.zonesCreated == 2, "CarZone was there")
        let tokens = try await backend.store.zones().map(\.syncToken)
        let (second, outcomes) = try await copy(TestChangeSource(changes, assets: assets, name: "again"), into: backend)
        #expect(second.total.unchanged == 60 && outcomes.allSatisfy { $0 == .unchanged })
        #expect(second.assets == 0 && second.zonesCreated == 0)
        #expect(try await backend.store.zones().map(\.syncToken) == tokens, "nothing written: no change in any feed")
        let copied = try await contents(of: backend.store)
        #expect(copied.count == 60)
        for case .record(let record) in changes { #expect(copied[record.id] == record) }
        try await expectAssets(of: changes, from: assets, in: backend.store)
    }

    @Test(arguments: ConformanceBackend.allCases)
    func aCopyThatCrashedResumesToWhatAnUninterruptedCopyGives(_ kind: ConformanceBackend) async throws {
        let scratch = try Scratch()
        let (changes, assets) = try fleet(in: scratch)
        let whole = try await kind.make()
        _ = try await copy(TestChangeSource(changes, assets: assets), into: whole)

        let backend = try await kind.make()
        let source = TestChangeSource(changes, assets: assets, failAfter: 38)
        await #expect(throws: TestChangeSource.Crash.self) { _ = try await copy(source, into: backend) }
        let copier = RecordCopier(source: source, target: backend.store, journal: backend.journal)
        #expect(try await copier.resumePoint() == 35, "five rounds of seven were done before the crash")
        source.failAfter = nil
        let (tally, outcomes) = try await copy(source, into: backend)
        #expect(tally.total.resumed == 35 && outcomes.prefix(35).allSatisfy { $0 == .resumed })
        #expect(tally.total.created + tally.total.unchanged == 25, "the round under way may have been written: unchanged then")
        #expect(try await copier.resumePoint() == 0, "a finished copy leaves no resume point")
        #expect(try await contents(of: backend.store) == contents(of: whole.store))
    }

    @Test(arguments: ConformanceBackend.allCases)
    func conflictPoliciesDecideWhenTheTargetHoldsAnotherVersion(_ kind: ConformanceBackend) async throws {
        let zone = ZoneID(zoneName: "CarZone")
        func car(_ name: String, updated: Int64, text: String) -> Record {
            Record(recordType: "Car", recordName: name, zoneID: zone, fields: ["lastUpdate": .timestamp(updated), "name": .string(text)])
        }
        let source = [car("a", updated: 2000, text: "source"), car("b", updated: 1000, text: "source"), car("c", updated: 2000, text: "same")]
        for (policy, expected) in [
            (ConflictPolicy.clientWins, ["updated", "updated", "unchanged", "created"]),
            (.serverWins, ["kept", "kept", "unchanged", "kept"]),
            (.newer(field: "lastUpdate"), ["updated", "kept", "unchanged", "kept"]),
            (.fail, ["rejected", "rejected", "unchanged", "rejected"]),
        ] {
            let backend = try await kind.make()
            _ = try await backend.modify([
                RecordOperation(.create, car("a", updated: 1000, text: "target")), RecordOperation(.create, car("b", updated: 1500, text: "target")),
                RecordOperation(.create, car("c", updated: 2000, text: "same")), RecordOperation(.create, car("d", updated: 1, text: "target")),
            ])
            _ = try await backend.one(RecordOperation(.forceDelete, car("d", updated: 1, text: "")))
            let changes = (source + [car("d", updated: 5000, text: "source")]).map { RecordChange.record($0) }
            let (_, outcomes) = try await copy(TestChangeSource(changes, name: policy.description), into: backend) { $0.policy = policy }
            #expect(outcomes.map(\.name) == expected, "\(policy)")
            let texts = try await backend.store.fetch([car("a", updated: 0, text: "").id]).values.map { $0.fields["name"] }
            #expect(texts == [.string(policy == .clientWins || policy == .newer(field: "lastUpdate") ? "source" : "target")])
        }
    }

    @Test(arguments: ConformanceBackend.allCases)
    func validateCyclesAreWrittenInTwoSteps(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let zone = OpenBackend.zone
        func person(_ name: String, partner: String) -> Record {
            Record(
                recordType: "Person", recordName: name, zoneID: zone,
                fields: ["partner": .reference(Reference(recordName: partner, zoneID: zone, action: .validate)), "name": .string(name)])
        }
        let orphan = person("c", partner: "nobody")
        let changes: [RecordChange] = [.record(person("a", partner: "b")), .record(person("b", partner: "a")), .record(orphan)]
        let (tally, outcomes) = try await copy(TestChangeSource(changes), into: backend)
        #expect(outcomes == [.created, .created, .created])
        // Change by change, only a meets its partner missing; request by request, a and b meet each other's missing.
        #expect(tally.patched.first?.record.recordName == "a" && tally.patched.last?.record.recordName == "c")
        #expect(tally.patched.map(\.outcome.name).filter { $0 == "rejected" } == ["rejected"], "a reference that never came is reported")
        #expect(tally.patched.last?.outcome.name == "rejected")
        let stored = try await backend.store.fetch([person("a", partner: "").id, person("b", partner: "").id, orphan.id])
        #expect(stored[person("a", partner: "").id]?.fields["partner"] != nil, "completed at the end")
        #expect(stored[person("b", partner: "").id]?.fields["partner"] != nil)
        #expect(stored[orphan.id]?.fields["partner"] == nil, "written without the reference that never came")
    }

    @Test(arguments: ConformanceBackend.allCases)
    func deletionsDeleteOrAreAbsent(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let parent = car("1")
        let child = note("1", pointingAt: [parent.recordName])
        _ = try await backend.modify([RecordOperation(.create, parent), RecordOperation(.create, child)])
        let deletions: [RecordChange] = [parent, child, car("never")].map {
            .deletion(Deletion(recordType: $0.recordType, recordName: $0.recordName, zoneID: $0.zoneID))
        }
        let (tally, outcomes) = try await copy(TestChangeSource(deletions), into: backend)
        #expect(outcomes == [.deleted, .absent, .absent], "the note went with its parent (DELETE_SELF)")
        #expect(tally.total.deleted == 1 && tally.total.absent == 2)
        #expect(try await backend.store.fetch([parent.id, child.id]).isEmpty)
    }

    @Test(arguments: ConformanceBackend.allCases)
    func recordsWhoseAssetsCannotBeHadAreRejected(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let ghost = Asset(sha256: SHA256Hasher.digest(Array("ghost".utf8)), size: 5)
        let changes: [RecordChange] = [.record(TestRecords.vehicle(index: 1, photo: ghost)), .record(TestRecords.vehicle(index: 2))]
        let (tally, outcomes) = try await copy(TestChangeSource(changes), into: backend)
        #expect(outcomes.map(\.name) == ["rejected", "created"])
        if case .rejected(let code, _) = outcomes.first { #expect(code == "MISSING_ASSET") }
        #expect(tally.total.rejected == 1)
    }

    @Test(arguments: ConformanceBackend.allCases)
    func aDryRunCountsWhatTheRunDoesAndWritesNothing(_ kind: ConformanceBackend) async throws {
        let scratch = try Scratch()
        var (changes, assets) = try fleet(in: scratch)
        let zone = ZoneID(zoneName: "CarZone")
        func person(_ name: String, partner: String) -> Record {
            Record(
                recordType: "Person", recordName: name, zoneID: zone,
                fields: ["partner": .reference(Reference(recordName: partner, zoneID: zone, action: .validate))])
        }
        changes += [.record(person("a", partner: "b")), .record(person("b", partner: "a"))]
        changes += [.deletion(Deletion(recordType: "Car", recordName: "Car.gone", zoneID: zone))]
        for round in 0..<2 {
            let backend = try await kind.make()
            if round == 1 {
                // Against a target that holds part of the data already, one record of it changed.
                _ = try await copy(TestChangeSource(Array(changes.prefix(20)), assets: assets, name: "part"), into: backend)
                _ = try await backend.store.modify(
                    [RecordOperation(.forceReplace, TestRecords.vehicle("Bus", index: 2))], in: ZoneID(zoneName: "BusZone"), atomic: false)
            }
            let tokens = try await backend.store.zones().map(\.syncToken)
            let (dry, dryOutcomes) = try await copy(TestChangeSource(changes, assets: assets), into: backend) { $0.dryRun = true }
            #expect(try await backend.store.zones().map(\.syncToken) == tokens, "a dry run writes nothing")
            let (real, outcomes) = try await copy(TestChangeSource(changes, assets: assets), into: backend)
            #expect(dryOutcomes == outcomes)
            #expect(dry.total == real.total)
            #expect(dry.assets == real.assets && dry.assetBytes == real.assetBytes && dry.zonesCreated == real.zonesCreated)
            #expect(dry.patched.map(\.record.recordName) == real.patched.map(\.record.recordName))
        }
    }

    @Test(arguments: ConformanceBackend.allCases)
    func parallelZonesGiveWhatOneAtATimeGives(_ kind: ConformanceBackend) async throws {
        let records = (0..<40).map { index in
            Record(
                recordType: "Item", recordName: "Item.\(index)", zoneID: ZoneID(zoneName: "Zone\(index % 9)"),
                fields: ["n": .int64(Int64(index))])
        }
        let serial = try await kind.make()
        let parallel = try await kind.make()
        let (one, serialOutcomes) = try await copy(TestChangeSource(records.map { .record($0) }), into: serial) { $0.batchSize = 40 }
        let (many, parallelOutcomes) = try await copy(TestChangeSource(records.map { .record($0) }), into: parallel) {
            $0.batchSize = 40
            $0.parallel = 4
        }
        #expect(one.total == many.total && serialOutcomes == parallelOutcomes)
        #expect(try await contents(of: serial.store) == contents(of: parallel.store))
    }

    @Test(arguments: ConformanceBackend.allCases)
    func throttledRequestsAreSentAgainAndGiveUpWithExit75(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        let throttled = ThrottlingStore(backend.store, refusals: 2)
        let changes = (1...5).map { RecordChange.record(car("\($0)")) }
        var options = RecordCopier.Options()
        options.batchSize = 5
        let tally = try await RecordCopier(source: TestChangeSource(changes), target: throttled, journal: backend.journal, options: options).run {
            _, _ in
        }
        #expect(tally.total.created == 5 && throttled.refused == 2)
        let stubborn = ThrottlingStore(backend.store, refusals: 100)
        options.retries = 1
        await #expect {
            let more = (6...8).map { RecordChange.record(car("\($0)")) }
            _ = try await RecordCopier(source: TestChangeSource(more, name: "more"), target: stubborn, journal: backend.journal, options: options)
                .run { _, _ in }
        } throws: { error in
            (error as? BackendError)?.code == .throttled && (error as? BackendError)?.kind == .temporary
        }
    }

    @Test(arguments: ConformanceBackend.allCases)
    func aBundleStreamsItsAssetsIntoTheTargetFirst(_ kind: ConformanceBackend) async throws {
        let scratch = try Scratch()
        let (changes, assets) = try fleet(in: scratch, vehicles: 12)
        try TestBundles.write(changes, to: scratch.file("fleet.tar.gz"), assetDirectory: assets.root)
        let backend = try await kind.make()
        let (tally, _) = try await copy(try BundleChangeSource(path: scratch.file("fleet.tar.gz")), into: backend)
        #expect(tally.total.created == 24 && tally.assets == 3)
        try await expectAssets(of: changes, from: assets, in: backend.store)
        let (again, _) = try await copy(try BundleChangeSource(path: scratch.file("fleet.tar.gz")), into: backend)
        #expect(again.total.unchanged == 24 && again.assets == 0)
    }
}

extension CopyConformanceTests {
    @Test(arguments: ConformanceBackend.allCases)
    func everyBackendIsASourceToEveryOther(_ kind: ConformanceBackend) async throws {
        let scratch = try Scratch()
        let (changes, assets) = try fleet(in: scratch)
        let first = try await kind.make()
        _ = try await copy(TestChangeSource(changes, assets: assets), into: first)
        for other in ConformanceBackend.allCases {
            let second = try await other.make()
            let source = try await BackendChangeSource.open(first.store, kind: "test")
            #expect(source.expectedChanges == 60)
            let uncounted = try await BackendChangeSource.open(first.store, kind: "test", counting: false)
            #expect(uncounted.expectedChanges == nil && uncounted.fingerprint == source.fingerprint)
            let (tally, _) = try await copy(source, into: second)
            #expect(tally.total.created == 60 && tally.assets == 6, "\(kind) → \(other)")
            #expect(try await contents(of: second.store) == contents(of: first.store), "\(kind) → \(other)")
            for case .record(let record) in changes {
                for asset in record.fields.flatMap(\.value.assets) {
                    #expect(try await second.store.assetBytes(asset).collected() == first.store.assetBytes(asset).collected())
                }
            }
        }
    }
}

/// A backend that answers its first `refusals` modify requests with THROTTLED for every operation.
final class ThrottlingStore: ContractOnlyStore, @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int
    private(set) var refused = 0

    init(_ base: any RecordStore, refusals: Int) {
        remaining = refusals
        super.init(base)
    }

    override func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool) async throws -> [RecordOutcome] {
        let refuse = lock.withLock {
            guard remaining > 0 else { return false }
            remaining -= 1
            refused += 1
            return true
        }
        guard refuse else { return try await base.modify(operations, in: zone, atomic: atomic) }
        return operations.map { .failed($0.record.id, .throttled, reason: "slow down", retryAfter: .milliseconds(1)) }
    }
}
