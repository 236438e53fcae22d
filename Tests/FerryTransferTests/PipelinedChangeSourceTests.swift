import FerryBackend
import FerryRecords
import FerryTesting
import FerryTransfer
import Testing

/// The pipeline between a source's reading thread and its caller: order, preparation, and errors from either side,
/// with changes prepared by the reading thread or by a thread of their own.
@Suite struct PipelinedChangeSourceTests {
    /// `count` records, the source failing before the one numbered `failAt`.
    static func numbered(_ count: Int, failAt: Int? = nil) -> MemorySource {
        MemorySource((0..<count).map { Record(recordType: "Car", recordName: "c\($0)", zoneID: ZoneID(zoneName: "Z")) }, failAt: failAt)
    }

    struct Stop: Error {}

    /// A pipeline over `source` that marks each change it prepares.
    static func pipeline(_ source: MemorySource, ownThread: Bool) -> PipelinedChangeSource {
        let pipeline = PipelinedChangeSource(source, batchSize: 7, depth: 4)
        pipeline.prepare = { change in change.problems.append("prepared") }
        pipeline.preparesOnItsOwnThread = ownThread
        return pipeline
    }

    @Test(arguments: [false, true]) func everyChangeComesOnceInTheSourcesOrder(ownThread: Bool) throws {
        let pipeline = Self.pipeline(Self.numbered(1000), ownThread: ownThread)
        var names: [String] = []
        var prepared = 0
        try pipeline.forEachBatch { batch in
            for change in batch {
                names.append(change.change.recordName)
                if change.problems == ["prepared"] { prepared += 1 }
            }
        }
        #expect(names == (0..<1000).map { "c\($0)" })
        // Prepared on a thread of their own, every one; by the reading thread, only while the caller is behind.
        if ownThread { #expect(prepared == 1000) }
    }

    @Test(arguments: [false, true]) func theReadersFailureReachesTheCallerAfterWhatCameBeforeIt(ownThread: Bool) throws {
        let pipeline = Self.pipeline(Self.numbered(1000, failAt: 500), ownThread: ownThread)
        var names: [String] = []
        #expect(throws: MemorySource.Crash.self) {
            try pipeline.forEachBatch { batch in names += batch.map(\.change.recordName) }
        }
        // Every whole batch read before the failure (the last, partial one goes with it).
        #expect(names == (0..<(500 - 500 % 7)).map { "c\($0)" })
    }

    @Test(arguments: [false, true]) func theCallersFailureStopsTheThreadsBehindIt(ownThread: Bool) throws {
        let pipeline = Self.pipeline(Self.numbered(100_000), ownThread: ownThread)
        var batches = 0
        #expect(throws: Stop.self) {
            try pipeline.forEachBatch { _ in
                batches += 1
                if batches == 3 { throw Stop() }
            }
        }
        #expect(batches == 3)
    }
}
