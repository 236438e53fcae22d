import FerryBackend
import FerryLocalStore
import FerryRecords
import FerryTesting
import Foundation
import Synchronization
import Testing

/// The backends the conformance suite runs over; a new backend adds a case here and passes every test.
enum ConformanceBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    /// The in-memory reference store.
    case memory
    /// The embedded local store (one SQLite file).
    case local

    var testDescription: String { rawValue }

    /// A fresh, empty backend with one custom zone, `CarZone`, whose clock moves one second per write.
    func make() async throws -> OpenBackend {
        let ticks = Ticks()
        switch self {
        case .memory:
            let store = InMemoryRecordStore(clock: { ticks.next() })
            _ = try await store.createZone(OpenBackend.zone)
            return OpenBackend(store: store, journal: store, scratch: nil)
        case .local:
            let scratch = try Scratch()
            let local = try LocalStore(path: scratch.file("conformance.ferry"), create: true)
            local.clock = { ticks.next() }
            let store = LocalRecordStore(local)
            _ = try await store.createZone(OpenBackend.zone)
            return OpenBackend(store: store, journal: store, scratch: scratch)
        }
    }
}

/// A backend under test, with what keeps its files alive.
struct OpenBackend {
    static let zone = ZoneID(zoneName: "CarZone")

    let store: any RecordStore
    let journal: any CheckpointJournal
    let scratch: Scratch?

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
