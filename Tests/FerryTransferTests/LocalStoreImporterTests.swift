import FerryBackend
import FerryCore
import FerryLocalStore
import FerryRecords
import FerryTesting
import FerryTransfer
import Foundation
import Testing

/// The importer's checkpoints: an interrupted copy resumes after its last committed batch.
@Suite struct LocalStoreImporterTests {
    /// A new store, a fleet of 50 records whose source crashes before record 37, and a first copy that crashed there
    /// (read through a pipeline, if given).
    private func crashedCopy(
        _ options: LocalStoreImporter.Options, pipelined: (batchSize: Int, depth: Int)? = nil
    ) throws -> (Scratch, LocalStore, MemorySource) {
        let scratch = try Scratch()
        let store = try LocalStore(path: scratch.file("s.ferry"), create: true)
        let source = MemorySource(TestRecords.fleet(vehicles: 25, notesPerVehicle: 1, types: ["Car"]), failAt: 37)
        let first: any ChangeSource = pipelined.map { PipelinedChangeSource(source, batchSize: $0.batchSize, depth: $0.depth) } ?? source
        #expect(throws: MemorySource.Crash.self) { _ = try LocalStoreImporter(store: store, source: first, options: options).run { _, _ in } }
        return (scratch, store, source)
    }

    @Test func anInterruptedCopyResumesAfterItsLastCheckpoint() throws {
        var options = LocalStoreImporter.Options()
        options.batchSize = 10
        let (scratch, store, source) = try crashedCopy(options)
        defer { _ = scratch }
        let importer = LocalStoreImporter(store: store, source: source, options: options)
        #expect(try importer.resumePoint() == 30, "three batches of ten were committed before the crash")
        source.failAt = nil
        var outcomes: [TransferOutcome] = []
        let tally = try importer.run { _, outcome in outcomes.append(outcome) }
        #expect(tally.total.resumed == 30 && tally.total.created == 20)
        #expect(outcomes.prefix(30).allSatisfy { $0 == .resumed })
        #expect(try importer.resumePoint() == 0, "a finished copy leaves no resume point")
        let again = try LocalStoreImporter(store: store, source: source, options: options).run { _, _ in }
        #expect(again.total.unchanged == 50, "after finishing, a new run compares everything and writes nothing")
        #expect(try store.zones().first { $0.zoneID.zoneName == "CarZone" }?.recordCount == 50)
    }

    @Test func transactionsEndAtTheirLimitWhateverTheBatchesThePipelineHandsOver() throws {
        var options = LocalStoreImporter.Options()
        options.batchSize = 10
        // Batches of seven cross every transaction boundary; the crash comes while the sixth batch fills.
        let (scratch, store, source) = try crashedCopy(options, pipelined: (batchSize: 7, depth: 2))
        defer { _ = scratch }
        let importer = LocalStoreImporter(store: store, source: PipelinedChangeSource(source, batchSize: 7, depth: 2), options: options)
        #expect(try importer.resumePoint() == 30, "three transactions of ten were committed before the crash")
        source.failAt = nil
        var outcomes: [TransferOutcome] = []
        let tally = try importer.run { _, outcome in outcomes.append(outcome) }
        #expect(tally.total.resumed == 30 && tally.total.created == 20)
        #expect(outcomes.count == 50 && outcomes.prefix(30).allSatisfy { $0 == .resumed })
        #expect(outcomes.dropFirst(30).allSatisfy { $0 == .created })
        #expect(try store.zones().first { $0.zoneID.zoneName == "CarZone" }?.recordCount == 50)
    }

    @Test func transactionsAlsoEndAtTheirByteLimit() throws {
        var options = LocalStoreImporter.Options()
        options.batchSize = 1000
        // Each record is estimated at a few hundred bytes: a limit of one byte commits every change on its own.
        options.batchBytes = 1
        let (scratch, store, source) = try crashedCopy(options)
        defer { _ = scratch }
        #expect(try LocalStoreImporter(store: store, source: source, options: options).resumePoint() == 37)
    }
}
