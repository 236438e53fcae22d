// `ferry-bench archives STORE_DIR`: decodes every archived CKRecordID in a store made by
// ../shared/bench/make_store.py and prints the count and a checksum of the record names, in the same form as
// peer_archives.py, so the outputs can be compared (Scripts/bench archives).
import FerryCore
import FerryPlist
import Foundation
import GRDB

/// Decodes the store's archived record IDs; returns the exit status.
func benchArchives(storeDirectory: String) -> Int32 {
    var configuration = Configuration()
    configuration.readonly = true
    do {
        let store = try DatabaseQueue(path: "\(storeDirectory)/CarsTrucksBuses.sqlite", configuration: configuration)
        var hasher = SHA256Hasher()
        var count = 0
        try store.read { db in
            for table in ["ZBUS", "ZCAR", "ZTRUCK", "ZNOTE", "ZDELETEDCLOUDKITOBJECT"] {
                let rows = try Row.fetchCursor(db, sql: "SELECT ZRECORDID FROM \(table)")
                // Blobs are read here, in batches, and decoded on every core; names are hashed in row order.
                try OrderedParallelMap.run(
                    workers: OrderedParallelMap.defaultWorkers,
                    produce: { () -> BlobBatch? in
                        var batch = BlobBatch()
                        while batch.ranges.count < 4096, let row = try rows.next() {
                            try row.withUnsafeData(atIndex: 0) { blob in
                                guard let blob else { return }
                                let start = batch.bytes.count
                                batch.bytes.append(contentsOf: blob)
                                batch.ranges.append(start..<batch.bytes.count)
                            }
                        }
                        return batch.ranges.isEmpty ? nil : batch
                    },
                    transform: { batch in batch.recordNames() },
                    consume: { names in
                        for name in try names.get() {
                            hasher.update(Array(name.utf8))
                            count += 1
                        }
                    })
            }
        }
        print(count, String(hasher.finalize().hex.prefix(16)))
        return 0
    } catch {
        FileHandle.standardError.write(Data("ferry-bench: \(error)\n".utf8))
        return 65
    }
}

/// Archived blobs copied out of SQLite's buffers, to decode on another thread.
struct BlobBatch: Sendable {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []

    /// The record name of each blob's archived CKRecordID.
    func recordNames() -> Result<[String], any Error> {
        bytes.withUnsafeBytes { buffer in
            Result { () throws -> [String] in
                var names: [String] = []
                names.reserveCapacity(ranges.count)
                for range in ranges {
                    let blob = UnsafeRawBufferPointer(rebasing: buffer[range])
                    let id = try BinaryPlist.withPlist(borrowing: blob) { plist in try plist.archivedRecordID() }
                    names.append(id.recordName)
                }
                return names
            }
        }
    }
}
