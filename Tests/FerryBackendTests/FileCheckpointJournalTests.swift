import FerryBackend
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The journal of backends that cannot hold one: files beside the run's state, surviving the process.
@Suite struct FileCheckpointJournalTests {
    @Test func checkpointsAndDeferredRecordsOutliveTheJournalObject() async throws {
        let scratch = try Scratch()
        let directory = scratch.file("journal/nested")
        do {
            let journal = try FileCheckpointJournal(directory: directory)
            #expect(try await journal.checkpoint(run: "r") == nil)
            try await journal.setCheckpoint(run: "r", source: "s", CopyCheckpoint(done: 7, finished: false))
            try await journal.deferRecord(note("1", pointingAt: ["Car.1"], action: .validate), run: "r")
            try await journal.deferRecord(car("2"), run: "r")
        }
        // Another process (here: another object) resumes from the files.
        let again = try FileCheckpointJournal(directory: directory)
        #expect(try await again.checkpoint(run: "r") == CopyCheckpoint(done: 7, finished: false))
        #expect(try await again.checkpoint(run: "other") == nil)
        #expect(try await again.takeDeferred(run: "r") == [note("1", pointingAt: ["Car.1"], action: .validate), car("2")])
        #expect(try await again.takeDeferred(run: "r").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".partial") }.isEmpty)
    }

    @Test func aRoundSentAgainDefersOnceAndACutLineIsIgnored() async throws {
        let scratch = try Scratch()
        let journal = try FileCheckpointJournal(directory: scratch.path)
        var changed = car("1")
        try await journal.deferRecord(changed, run: "r")
        changed.fields["name"] = .string("Mini")
        try await journal.deferRecord(changed, run: "r")
        try await journal.deferRecord(car("3"), run: "r")
        // A crash while appending leaves a line without its end; its round is sent again, so it is dropped.
        let file = scratch.file("r.deferred.ndjson")
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"recordName\":\"Car.9\",\"recordT".utf8))
        try handle.close()
        #expect(try await journal.takeDeferred(run: "r") == [changed, car("3")], "the last version of a record counts, once")
    }

    @Test func aDamagedJournalSaysHowToStartAgain() async throws {
        let scratch = try Scratch()
        let journal = try FileCheckpointJournal(directory: scratch.path)
        try scratch.write("r.checkpoint.json", "{not json")
        await #expect {
            _ = try await journal.checkpoint(run: "r")
        } throws: { error in
            (error as? BackendError)?.code == .damaged && (error as? BackendError)?.message.contains("remove it to copy from the start") == true
        }
    }
}
