import FerryBackend
import FerryLocalStore
import FerryPostgres
import FerryRecords
import FerryTesting
import Foundation
import Synchronization
import Testing

/// The backends the conformance suite runs over; a new backend adds a case here and passes every test.
enum ConformanceBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// The in-memory reference store.
    case memory
    /// The embedded local store (one SQLite file); copies take its bulk path.
    case local
    /// The local store seen only through the contract, so that copies into it go request by request.
    case localByRequests
    /// PostgreSQL, on the server `Scripts/test` starts (or `FERRY_TEST_PG_URL`), in a schema of the test's own.
    case postgres

    var testDescription: String { self == .localByRequests ? "local (request by request)" : rawValue }

    /// Every backend; PostgreSQL only with a server (in CI a missing server fails its tests instead of leaving them out).
    static var allCases: [ConformanceBackend] {
        TestEnvironment.postgresURL != nil || TestEnvironment.isCI
            ? [.memory, .local, .localByRequests, .postgres] : [.memory, .local, .localByRequests]
    }

    /// A fresh, empty backend with one custom zone, `CarZone`, whose clock moves one second per write.
    func make() async throws -> OpenBackend {
        let ticks = Ticks()
        switch self {
        case .memory:
            let store = InMemoryRecordStore(clock: { ticks.next() })
            _ = try await store.createZone(OpenBackend.zone)
            return OpenBackend(store: store, journal: store, scratch: nil)
        case .local, .localByRequests:
            let scratch = try Scratch()
            let local = try LocalStore(path: scratch.file("conformance.ferry"), create: true)
            local.clock = { ticks.next() }
            let store = LocalRecordStore(local)
            _ = try await store.createZone(OpenBackend.zone)
            return OpenBackend(store: self == .local ? store : ContractOnlyStore(store), journal: store, scratch: scratch)
        case .postgres:
            guard let url = TestEnvironment.postgresURL else {
                throw ConformanceFailure("FERRY_TEST_PG_URL is not set: Scripts/test starts the server")
            }
            let schema = "c_\(UInt32.random(in: 0...UInt32.max))"
            let settings = try PostgresSettings(url: url + (url.contains("?") ? "&" : "?") + "schema=\(schema)&sslmode=disable")
            let database = try await PostgresDatabase.open(settings)
            try await PostgresSchema.migrate(database)
            let store = PostgresRecordStore(database, clock: { ticks.next() })
            _ = try await store.createZone(OpenBackend.zone)
            return OpenBackend(store: store, journal: store, scratch: nil, keeper: PoolKeeper(database))
        }
    }
}

/// A backend under test, with what keeps its files alive.
struct OpenBackend {
    static let zone = ZoneID(zoneName: "CarZone")

    let store: any RecordStore
    let journal: any CheckpointJournal
    let scratch: Scratch?
    /// Ends a server backend's connection pool when the test is done with it.
    var keeper: PoolKeeper? = nil

    /// One operation's outcome.
    func one(_ operation: RecordOperation, atomic: Bool = false) async throws -> RecordOutcome {
        let outcomes = try await store.modify([operation], in: operation.record.zoneID, atomic: atomic)
        return try #require(outcomes.first)
    }

    /// Operations of `CarZone`.
    func modify(_ operations: [RecordOperation], atomic: Bool = false) async throws -> [RecordOutcome] {
        try await store.modify(operations, in: Self.zone, atomic: atomic)
    }
}

/// A clock that moves one second per call.
final class Ticks: Sendable {
    private let now = Mutex<Int64>(1_700_000_000_000)

    func next() -> Int64 {
        now.withLock { now in
            now += 1000
            return now
        }
    }
}

func car(_ name: String, _ fields: RecordFields = ["name": .string("Beetle")]) -> Record {
    Record(recordType: "Car", recordName: "Car.\(name)", zoneID: OpenBackend.zone, fields: fields)
}

func note(_ name: String, pointingAt targets: [String], action: Reference.Action = .deleteSelf) -> Record {
    var fields: RecordFields = ["text": .string(name)]
    for (index, target) in targets.enumerated() {
        fields["car\(index)"] = .reference(Reference(recordName: target, zoneID: OpenBackend.zone, action: action))
    }
    return Record(recordType: "Note", recordName: "Note.\(name)", zoneID: OpenBackend.zone, fields: fields)
}

/// The record an outcome saved.
func saved(_ outcome: RecordOutcome) throws -> Record {
    guard case .saved(let record) = outcome else { throw ConformanceFailure("expected saved, got \(outcome)") }
    return record
}

/// A failed expectation with a message.
struct ConformanceFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A backend seen only through ``RecordStore``: it hides any faster path the backend has (``BulkCopying``), and
/// subclasses change what they test (``ThrottlingStore``).
class ContractOnlyStore: RecordStore, @unchecked Sendable {
    let base: any RecordStore

    init(_ base: any RecordStore) { self.base = base }

    var name: String { base.name }
    var capabilities: BackendCapabilities { base.capabilities }
    func zones() async throws -> [ZoneSummary] { try await base.zones() }
    func createZone(_ zone: ZoneID) async throws -> Bool { try await base.createZone(zone) }
    func deleteZone(_ zone: ZoneID) async throws -> Bool { try await base.deleteZone(zone) }
    func lookup(_ ids: [RecordID]) async throws -> [RecordID: RecordVersion] { try await base.lookup(ids) }
    func fetch(_ ids: [RecordID]) async throws -> [RecordID: Record] { try await base.fetch(ids) }
    func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool) async throws -> [RecordOutcome] {
        try await base.modify(operations, in: zone, atomic: atomic)
    }
    func missingAssets(_ assets: [Asset]) async throws -> [Asset] { try await base.missingAssets(assets) }
    func putAsset(_ asset: Asset, bytes: AssetBytes) async throws -> Bool { try await base.putAsset(asset, bytes: bytes) }
    func assetBytes(_ asset: Asset) async throws -> AssetBytes { try await base.assetBytes(asset) }
    func changes(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> ChangePage {
        try await base.changes(in: zone, since: token, limit: limit)
    }
    /// Nothing to end (the test's backend owns the connection); a method of the class, so subclasses can count calls.
    func close() async throws {}
}

/// Ends a PostgreSQL pool when the last copy of a test's backend goes.
final class PoolKeeper: Sendable {
    let database: PostgresDatabase
    init(_ database: PostgresDatabase) { self.database = database }
    deinit { database.shutDown() }
}
