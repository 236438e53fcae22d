import FerryBackend
import FerryCore
import FerryRecords
import FerryTransfer
import Synchronization
import Testing

/// ``StoreVerifier`` and ``StoreListing`` over every backend: what they count and find, page after page.
@Suite struct InspectionConformanceTests {
    /// Records of `CarZone`, written a request at a time.
    private func fill(_ backend: OpenBackend, _ names: Range<Int>) async throws {
        for start in stride(from: names.lowerBound, to: names.upperBound, by: 1000) {
            let operations = (start..<min(start + 1000, names.upperBound)).map { RecordOperation(.create, car("\($0)", ["n": .int64(Int64($0))])) }
            let outcomes = try await backend.modify(operations)
            #expect(outcomes.allSatisfy { $0.errorCode == nil })
        }
    }

    /// A backend that holds what was written checks out whole: every record counted once over several pages, in two
    /// zones, no problem.
    @Test(arguments: ConformanceBackend.allCases)
    func aHealthyBackendChecksOutWithEveryRecordCountedOnce(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        try await fill(backend, 0..<(2 * StoreVerifier.pageSize + 500))
        let other = ZoneID(zoneName: "Other")
        #expect(try await backend.store.createZone(other))
        let truck = Record(recordType: "Truck", recordName: "Truck.1", zoneID: other)
        #expect(try await backend.store.modify([RecordOperation(.create, truck)], in: other, atomic: false)[0].errorCode == nil)
        var problems: [StoreVerifier.Problem] = []
        var progress: [Int] = []
        let report = try await StoreVerifier(store: backend.store).verify(onProblem: { problems.append($0) }, onProgress: { progress.append($0) })
        #expect(report.records == 2 * StoreVerifier.pageSize + 501 && report.problems == 0 && problems.isEmpty, "\(problems)")
        #expect(progress.last == report.records && progress == progress.sorted() && progress.count >= 4, "\(progress)")
    }

    /// A backend that can be read as of one moment is checked as of the check's start: records written and changed
    /// while it runs are neither counted nor taken for damage (a live database verified under its writers).
    @Test(arguments: ConformanceBackend.allCases)
    func whatIsWrittenDuringACheckIsLeftToTheNextOne(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        guard backend.store is any SnapshotReading else { return }
        let total = 2 * StoreVerifier.pageSize + 10
        try await fill(backend, 0..<total)
        var wrote = false
        var problems: [StoreVerifier.Problem] = []
        let report = try await StoreVerifier(store: backend.store).verify(
            onProblem: { problems.append($0) },
            onProgress: { _ in
                guard !wrote else { return }
                wrote = true
                // After the first page: records added, and one of the next page changed (its feed row moves on).
                try? await fill(backend, total..<(total + 50))
                let changed = car("\(total - 3)", ["n": .int64(-1)])
                _ = try? await backend.modify([RecordOperation(.forceUpdate, changed)])
            })
        let checked = report.records
        #expect(wrote, "the records were written during the check")
        #expect(checked == total && problems.isEmpty, "\(checked) \(problems)")
        let after = try await StoreVerifier(store: backend.store).verify(onProblem: { problems.append($0) })
        #expect(after.records == total + 50 && problems.isEmpty)
    }

    /// A listing counts every record once over several pages, per zone and per type, with their assets.
    @Test(arguments: ConformanceBackend.allCases)
    func aListingCountsEveryZoneAndTypeOverSeveralPages(_ kind: ConformanceBackend) async throws {
        let backend = try await kind.make()
        try await fill(backend, 0..<4_500)
        let other = ZoneID(zoneName: "Other")
        #expect(try await backend.store.createZone(other))
        let bytes: [UInt8] = Array("a photo".utf8)
        let photo = Asset(sha256: SHA256Hasher.digest(bytes), size: Int64(bytes.count))
        #expect(try await backend.store.putAsset(photo, bytes: .buffer(bytes)))
        let truck = Record(recordType: "Truck", recordName: "Truck.1", zoneID: other, fields: ["photo": .asset(photo)])
        #expect(try await backend.store.modify([RecordOperation(.create, truck)], in: other, atomic: false)[0].errorCode == nil)
        let listing = try await StoreListing.read(backend.store, pageSize: 1_000, linePageSize: 1_000)
        #expect(listing.recordCount == 4_501 && listing.assets == 1 && listing.assetBytes == Int64(bytes.count))
        #expect(listing.zones.map(\.zoneID) == (try await backend.store.zones()).map(\.zoneID))
        #expect(listing.zones.first { $0.zoneID == OpenBackend.zone }?.recordCount == 4_500)
        #expect(listing.zones.first { $0.zoneID == other }?.recordCount == 1)
        #expect(listing.rows.map(\.recordType) == ["Car", "Truck"] && listing.rows.map(\.count) == [4_500, 1])
    }
}

/// A store whose snapshots are views of it that count how often they are closed.
final class CountingSnapshotStore: ContractOnlyStore, SnapshotReading, @unchecked Sendable {
    final class View: ContractOnlyStore, @unchecked Sendable {
        let closed = Mutex(0)
        override func close() async throws { closed.withLock { $0 += 1 } }
    }

    let views = Mutex<[View]>([])

    func snapshot() async throws -> any RecordStore {
        let view = View(base)
        views.withLock { $0.append(view) }
        return view
    }
}

@Suite struct WithSnapshotTests {
    struct Refused: Error {}

    /// The body gets the snapshot, which is closed once the body returns, and once when it throws; a store that
    /// takes no snapshot is given as it is.
    @Test func theSnapshotIsClosedWhateverTheBodyDoes() async throws {
        let store = CountingSnapshotStore(InMemoryRecordStore())
        let given = try await store.withSnapshot { reader in reader as? CountingSnapshotStore.View }
        let views = store.views.withLock { $0 }
        #expect(views.count == 1 && given === views[0] && views[0].closed.withLock { $0 } == 1)
        await #expect(throws: Refused.self) { _ = try await store.withSnapshot { _ -> Int in throw Refused() } }
        let all = store.views.withLock { $0 }
        #expect(all.count == 2 && all[1].closed.withLock { $0 } == 1)
        let plain = InMemoryRecordStore()
        #expect(try await plain.withSnapshot { $0 as? InMemoryRecordStore } === plain)
    }
}
