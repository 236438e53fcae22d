import FerryBackend
import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import FerryTransfer
import Foundation
import Testing

/// A copy into a bundle from a backend that reads its feed as lines (``LineReading``) writes the bundle that reading
/// its records writes, with the same rejections, whichever way it is read.
@Suite struct BundleCopierTests {
    let zone = ZoneID(zoneName: "CarZone")

    /// A backend holding cars (one of them deleted, one whose name is a number, which a bundle refuses after the cars
    /// before it) and notes that point at them.
    func backend() async throws -> InMemoryRecordStore {
        let store = InMemoryRecordStore()
        _ = try await store.createZone(zone)
        var records = (1...600).map { Record(recordType: "Car", recordName: "Car.\($0)", zoneID: zone, fields: ["name": .string("Car \($0)")]) }
        records.append(Record(recordType: "Car", recordName: "Car.number", zoneID: zone, fields: ["name": .int64(7)]))
        records += (1...600).map {
            Record(
                recordType: "Note", recordName: "Note.\($0)", zoneID: zone,
                fields: [
                    "car": .reference(Reference(recordName: "Car.\($0)", zoneID: zone, action: .deleteSelf)),
                    "text": .string("note \"\($0)\" ✓"),
                ])
        }
        _ = try await store.modify(records.map { RecordOperation(.create, $0) }, in: zone, atomic: false)
        _ = try await store.modify([RecordOperation(.forceDelete, records[4])], in: zone, atomic: false)
        return store
    }

    /// Copies `source` into a bundle `b.tar.zst` in a scratch directory of its own, on a thread of its own (a backend
    /// source waits for each page, which the cooperative pool's threads must not); its bytes, the counts and the
    /// rejected records' origins and names.
    func copy(_ source: any ChangeSource, lines: Bool) async throws -> (bytes: Data, counts: BundleCopier.Counts, rejected: [String]) {
        let scratch = try Scratch()
        return try await AsyncBridge.handOver { try Self.copy(source, lines: lines, to: scratch.file("b.tar.zst")) }
    }

    static func copy(_ source: any ChangeSource, lines: Bool, to path: String) throws -> (
        bytes: Data, counts: BundleCopier.Counts, rejected: [String]
    ) {
        var options = BundleWriter.Options(source: .init(kind: "test", description: "test"))
        options.format = .tarZstd
        let copier = BundleCopier(source: source, path: path, options: options)
        copier.readsLines = lines
        var rejected: [String] = []
        let (_, counts) = try copier.run(
            BundleCopier.Events(
                warning: { _, _ in }, rejected: { origin, change, _ in rejected.append("\(origin) \(change.recordName)") }, progress: { _ in }),
            createdAt: { Date(timeIntervalSince1970: 1_700_000_000) })
        return (try Data(contentsOf: URL(fileURLWithPath: path)), counts, rejected)
    }

    @Test func linesAndRecordsGiveTheSameBundle() async throws {
        let store = try await backend()
        let source = PipelinedChangeSource(try await BackendChangeSource.open(store, kind: "memory", pageSize: 100))
        #expect(source.readsLines)
        let byLines = try await copy(source, lines: true)
        let byRecords = try await copy(source, lines: false)
        #expect(byLines.bytes == byRecords.bytes)
        #expect(byLines.counts.read == 1199, "the live records: the deleted car and its note (a DELETE_SELF cascade) are none")
        #expect(byRecords.counts.read == 1199)
        #expect(byLines.rejected == ["memory CarZone Car.number"] && byLines.rejected == byRecords.rejected)
        #expect(byLines.counts.rejected == byRecords.counts.rejected)
    }

    @Test func fromAPositionDeletionsAreCopiedEitherWay() async throws {
        let store = try await backend()
        let position = try #require(try await BackendChangeSource.open(store, kind: "memory").feedPosition)
        _ = try await store.modify(
            [
                RecordOperation(.forceDelete, Record(recordType: "Car", recordName: "Car.7", zoneID: zone)),
                RecordOperation(.forceReplace, Record(recordType: "Car", recordName: "Car.8", zoneID: zone, fields: ["name": .string("Mini")])),
            ], in: zone, atomic: false)
        let source = PipelinedChangeSource(try await BackendChangeSource.open(store, kind: "memory", since: position))
        let byLines = try await copy(source, lines: true)
        let byRecords = try await copy(source, lines: false)
        #expect(byLines.bytes == byRecords.bytes)
        // Car.7 and its note (a DELETE_SELF cascade), and Car.8.
        #expect(byLines.counts.read == 3)
        #expect(byRecords.counts.read == 3)
    }
}
