import FerryCore
import FerryCoreData
import FerryTesting
import Foundation
import Testing

/// A store that another process writes while Ferry reads it (an app still running) is refused, never read half old,
/// half new.
@Suite struct ChangedStoreTests {
    @Test func aStoreWrittenWhileItIsReadInPlaceIsRefused() throws {
        try #require(SQLiteShell.isAvailable, "the sqlite3 shell is needed (Scripts/test installs it)")
        let scratch = try Scratch()
        let copy = try StoreFixtures.copy(SampleStoreTests.cars, into: scratch)
        let store = try CoreDataStore(path: copy)
        var before = 0
        try store.forEachObject { _ in before += 1 }
        #expect(before > 0)
        // Another writer: its change reaches the main file when it checkpoints at close.
        try SQLiteShell.execute(copy, "UPDATE ZCAR SET ZNAME = 'changed'")
        #expect {
            try store.forEachObject { _ in }
        } throws: { error in
            guard let error = error as? CoreDataError else { return false }
            return error.code == .changedWhileRead && error.kind == .temporary
                && error.message.hasPrefix("\(copy): \(copy) changed while the store was read")
        }
    }

    @Test func snapshotsNoticeFilesWrittenMadeAndRemoved() throws {
        let scratch = try Scratch()
        let kept = try scratch.write("kept", "a")
        let written = try scratch.write("written", "a")
        let removed = try scratch.write("removed", "a")
        let made = scratch.file("made")
        let snapshot = FileSnapshot(paths: [kept, written, removed, made])
        #expect(snapshot.changedFile() == nil)
        try scratch.write("made", "new")
        #expect(snapshot.changedFile() == made)
        try FileManager.default.removeItem(atPath: made)
        try FileManager.default.removeItem(atPath: removed)
        #expect(snapshot.changedFile() == removed)
        try scratch.write("removed", "a")
        let handle = try #require(FileHandle(forWritingAtPath: written))
        handle.seekToEndOfFile()
        handle.write(Data("b".utf8))
        try handle.close()
        #expect(snapshot.changedFile() == removed, "a new file at a removed one's path is another file")
        let fresh = FileSnapshot(paths: [kept, written])
        #expect(fresh.changedFile() == nil)
    }
}
