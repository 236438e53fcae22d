// Ferry's side of benchmarks that need a program of their own (Scripts/bench archives), and per-phase timings of
// hot paths for profiling work.
//
//     ferry-bench archives STORE_DIR     decode every archived CKRecordID of a make_store.py store
//     ferry-bench records NDJSON...      decode, encode, validate and prepare canonical records, one thread
import Foundation

let arguments = CommandLine.arguments
let usage = "usage: ferry-bench archives STORE_DIR | ferry-bench records NDJSON...\n"
switch (arguments.count, arguments.dropFirst().first) {
case (3, "archives"): exit(benchArchives(storeDirectory: arguments[2]))
case (3..., "records"): exit(benchRecords(paths: Array(arguments.dropFirst(2))))
default:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(64)
}
