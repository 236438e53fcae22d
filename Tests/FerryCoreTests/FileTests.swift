import FerryCore
import FerryTesting
import Foundation
import Testing

@Suite struct AtomicOutputFileTests {
    @Test func appearsOnlyWhenCommitted() throws {
        let scratch = try Scratch()
        let path = scratch.file("out.txt")
        let output = try AtomicOutputFile(path: path)
        try output.file.write("hello")
        #expect(!FileManager.default.fileExists(atPath: path))
        try output.commit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello")
        #expect(scratch.listing() == ["out.txt"])
    }

    @Test func discardingLeavesTheOldFileAndNoTrace() throws {
        let scratch = try Scratch()
        let path = try scratch.write("out.txt", "old")
        do {
            let output = try AtomicOutputFile(path: path)
            try output.file.write("new")
            output.discard()
        }
        do {
            let output = try AtomicOutputFile(path: path)
            try output.file.write("abandoned without commit")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(scratch.listing() == ["out.txt"])
    }

    @Test func failsClearlyWhenTheDirectoryIsMissing() {
        #expect {
            _ = try AtomicOutputFile(path: "/nonexistent-dir/out.tar.gz")
        } throws: { error in
            (error as? CoreError)?.kind == .noInput || (error as? CoreError)?.kind == .cannotCreate
        }
    }
}

@Suite struct SystemErrorTests {
    @Test func aFullDiskSaysWhatToDo() {
        let error = SystemError(errno: ENOSPC).coreError("write", path: "/tmp/out.tar.gz", writing: true)
        #expect(error.code == .writeFailed && error.kind == .cannotCreate)
        #expect(error.message.hasPrefix("/tmp/out.tar.gz: write failed: No space left on device; free some space there"))
    }

    @Test func mapsMissingFilesAndRefusals() {
        #expect(SystemError(errno: ENOENT).coreError("open", path: "/x").code == .fileNotFound)
        #expect(SystemError(errno: EACCES).coreError("open", path: "/x").code == .permissionDenied)
        #expect(SystemError(errno: EIO).coreError("read", path: "/x").code == .readFailed)
    }
}

@Suite struct FileLockTests {
    @Test func oneHolderAtATimeAndTheFileGoesWithTheLock() throws {
        let scratch = try Scratch()
        let path = scratch.file("store-lock")
        let first = try #require(try FileLock.acquire(path: path))
        #expect(try FileLock.acquire(path: path) == nil, "taken, even from this process")
        #expect(FileLock.holder(of: path) == getpid())
        first.release()
        #expect(!FileManager.default.fileExists(atPath: path))
        first.release()
        let second = try #require(try FileLock.acquire(path: path))
        second.release()
    }

    @Test func aFileLeftByAKilledHolderIsTakenOver() throws {
        let scratch = try Scratch()
        let path = try scratch.write("store-lock", "99999\n")
        let lock = try #require(try FileLock.acquire(path: path))
        #expect(FileLock.holder(of: path) == getpid())
        lock.release()
    }

    @Test func failsClearlyWhereNoLockFileCanBeMade() {
        #expect {
            _ = try FileLock.acquire(path: "/nonexistent-dir/store-lock")
        } throws: { error in
            (error as? CoreError)?.code == .fileNotFound && "\(error)".contains("/nonexistent-dir/store-lock")
        }
    }
}

@Suite struct FerryErrorDescriptionTests {
    @Test func aCauseIsAddedUnlessTheMessageAlreadySaysIt() {
        let said = CoreError(.fileNotFound, "x.ndjson: no such file or directory; check the path", cause: SystemError(errno: ENOENT))
        #expect(said.description == "x.ndjson: no such file or directory; check the path")
        let added = CoreError(.readFailed, "x.ndjson: read failed", cause: SystemError(errno: EIO))
        #expect(added.description == "x.ndjson: read failed (cause: Input/output error)")
    }
}
