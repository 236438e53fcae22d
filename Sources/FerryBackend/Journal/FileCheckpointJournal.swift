import FerryCore
import FerryRecords
import Foundation
import Synchronization

/// A copy journal in local files, for backends that cannot hold one in their own transactions.
///
/// Each run has `<run>.checkpoint.json` (replaced atomically: a temporary name, `fsync`, then rename) and
/// `<run>.deferred.ndjson` (appended and synced, one canonical record per line; a line cut short by a crash is
/// ignored, since the batch it belongs to is sent again on resume).
public final class FileCheckpointJournal: CheckpointJournal {
    /// The directory holding the journal files.
    public let directory: String
    private let lock = Mutex(())

    /// A journal in `directory`, created when missing.
    /// - Throws: ``CoreError`` when the directory cannot be made.
    public init(directory: String) throws {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw CoreError(.writeFailed, "\(directory): cannot create the copy journal's directory (\(error.localizedDescription))", cause: error)
        }
    }

    private func path(_ run: String, _ suffix: String) -> String { "\(directory)/\(run).\(suffix)" }

    public func checkpoint(run: String) async throws -> CopyCheckpoint? {
        try lock.withLock { _ in
            let file = path(run, "checkpoint.json")
            guard let data = FileManager.default.contents(atPath: file) else { return nil }
            do {
                return try JSONDecoder().decode(Entry.self, from: data).checkpoint
            } catch {
                throw BackendError(.damaged, "\(file): the copy journal does not decode; remove it to copy from the start", cause: error)
            }
        }
    }

    public func setCheckpoint(run: String, source: String, _ checkpoint: CopyCheckpoint) async throws {
        let data = try JSONEncoder().encode(Entry(checkpoint: checkpoint, source: source))
        try lock.withLock { _ in
            let output = try AtomicOutputFile(path: path(run, "checkpoint.json"), as: "the copy journal")
            try output.file.write(data)
            try output.commit()
        }
    }

    public func deferRecord(_ record: Record, run: String) async throws {
        var bare = record
        bare.system = nil
        let line = bare.canonicalJSON + [UInt8(ascii: "\n")]
        try lock.withLock { _ in
            let file = path(run, "deferred.ndjson")
            if !FileManager.default.fileExists(atPath: file) { _ = FileManager.default.createFile(atPath: file, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: file) else {
                throw CoreError(.writeFailed, "\(file): cannot write the copy journal")
            }
            defer { try? handle.close() }
            do {
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(line))
                try handle.synchronize()
            } catch {
                throw CoreError(.writeFailed, "\(file): cannot write the copy journal (\(error.localizedDescription))", cause: error)
            }
        }
    }

    public func takeDeferred(run: String) async throws -> [Record] {
        try lock.withLock { _ in
            let file = path(run, "deferred.ndjson")
            guard let data = FileManager.default.contents(atPath: file) else { return [] }
            var records: [Record] = []
            var positions: [RecordID: Int] = [:]
            // Only complete lines: one cut short by a crash belongs to a batch that is sent again.
            let lines = Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            let complete = data.last == UInt8(ascii: "\n") ? lines[...] : lines.dropLast()
            for (number, line) in complete.enumerated() {
                guard case .record(let record) = try? CloudKitJSONDecoder().decode(bytes: Array(line)) else {
                    throw BackendError(.damaged, "\(file): line \(number + 1) does not decode; remove the file to copy from the start")
                }
                // A batch sent again defers its records again: the last one counts.
                if let earlier = positions[record.id] {
                    records[earlier] = record
                } else {
                    positions[record.id] = records.count
                    records.append(record)
                }
            }
            try? FileManager.default.removeItem(atPath: file)
            return records
        }
    }

    private struct Entry: Codable {
        var checkpoint: CopyCheckpoint
        var source: String
    }
}
