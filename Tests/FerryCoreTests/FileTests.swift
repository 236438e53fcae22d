import FerryCore
import FerryTesting
import Foundation
import Testing

extension LineReader.Line {
    /// `line@offset:text`, or `line@offset:TOO LONG length`: what the reader tests compare.
    var described: String {
        switch self {
        case .bytes(let bytes, let position): "\(position.line)@\(position.offset):\(String(decoding: bytes, as: UTF8.self))"
        case .tooLong(let position, let length): "\(position.line)@\(position.offset):TOO LONG \(length)"
        }
    }
}

@Suite struct LineReaderTests {
    private func lines(_ text: String, maxLineLength: Int = 1 << 20, skippingByteOrderMark: Bool = false) throws -> [String] {
        let scratch = try Scratch()
        let path = try scratch.write("input.ndjson", text)
        var result: [String] = []
        let reader = try LineReader(path: path, maxLineLength: maxLineLength, skippingByteOrderMark: skippingByteOrderMark)
        try reader.forEachLine { result.append($0.described) }
        return result
    }

    @Test func splitsLinesWithPositions() throws {
        #expect(try lines("a\nbb\r\n\nccc") == ["1@0:a", "2@2:bb", "3@6:", "4@7:ccc"])
        #expect(try lines("") == [])
        #expect(try lines("x\n") == ["1@0:x"])
    }

    @Test func skipsAByteOrderMarkAtTheStartOnlyWhenAsked() throws {
        #expect(try lines("\u{FEFF}a\nb", skippingByteOrderMark: true) == ["1@3:a", "2@5:b"])
        #expect(try lines("\u{FEFF}", skippingByteOrderMark: true) == [])
        #expect(try lines("a\n\u{FEFF}b", skippingByteOrderMark: true) == ["1@0:a", "2@2:\u{FEFF}b"])
        #expect(try lines("\u{FEFF}a", skippingByteOrderMark: false) == ["1@0:\u{FEFF}a"])
        #expect(try lines("ab", skippingByteOrderMark: true) == ["1@0:ab"])
    }

    @Test func skipsOverLongLinesAndCarriesOn() throws {
        let long = String(repeating: "x", count: 100)
        #expect(try lines("a\n\(long)\nb\n", maxLineLength: 10) == ["1@0:a", "2@2:TOO LONG 100", "3@103:b"])
    }

    @Test func readsLinesLongerThanItsBuffer() throws {
        let long = String(repeating: "y", count: 3 << 20)
        let result = try lines("\(long)\nz", maxLineLength: 8 << 20)
        #expect(result.count == 2)
        #expect(result[0].count == (3 << 20) + 4)
        #expect(result[1] == "2@\((3 << 20) + 1):z")
    }

    @Test func namesTheFileWhenItIsMissing() {
        #expect {
            _ = try LineReader(path: "/nonexistent/records.ndjson")
        } throws: { error in
            (error as? CoreError)?.code == .fileNotFound && "\(error)".contains("/nonexistent/records.ndjson")
        }
    }
}

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
