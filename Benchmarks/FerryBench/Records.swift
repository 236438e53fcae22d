// `ferry-bench records NDJSON...`: times the per-record phases of pack and verify on one thread (decode, canonical
// encode, validation, the bundle writer's preparation, and pack's fast path that prepares lines without decoding
// them) and prints microseconds per record for each.
import FerryBundle
import FerryCore
import FerryJSON
import FerryRecords
import Foundation

/// Times the record phases over the lines of the files; returns the exit status.
func benchRecords(paths: [String]) -> Int32 {
    var lines: [[UInt8]] = []
    for path in paths {
        guard let data = FileManager.default.contents(atPath: path) else {
            FileHandle.standardError.write(Data("ferry-bench: cannot read \(path)\n".utf8))
            return 66
        }
        let bytes = [UInt8](data)
        var start = 0
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(Array(bytes[start..<end]))
            start = end + 1
        }
    }
    var decoder = CloudKitJSONDecoder()
    if let root = ProcessInfo.processInfo.environment["FERRY_BENCH_ASSETS"] {
        guard let provider = try? DirectoryAssetProvider(root: root) else { return 66 }
        decoder.assetResolver = { path, fileName in try provider.resolve(path: path, fileName: fileName) }
    }
    let validator = RecordValidator()
    let perRecord = { (seconds: Double) in String(format: "%.2f µs", seconds * 1e6 / Double(lines.count)) }
    /// Times pack's fast path over every line, in batches of 512 as pack hands them over: the lines it prepared, and
    /// the seconds.
    func prepareLines() -> (prepared: Int, seconds: Double) {
        var linePreparer = LinePreparer(decoder: decoder, validator: validator)
        var prepared = 0
        let seconds = timed {
            for start in stride(from: 0, to: lines.count, by: 512) {
                var batch = PreparedLines(capacity: 160 << 10)
                for line in lines[start..<min(start + 512, lines.count)] {
                    switch line.withUnsafeBytes({ linePreparer.prepare($0, into: &batch) }) {
                    case .batched, .prepared: prepared += 1
                    case .declined: break
                    }
                }
            }
        }
        return (prepared, seconds)
    }
    if ProcessInfo.processInfo.environment["FERRY_BENCH_LINES_ONLY"] != nil {
        let (prepared, seconds) = prepareLines()
        print("\(prepared) of \(lines.count) prepared from their lines; lines \(perRecord(seconds))")
        return 0
    }
    var changes: [RecordChange] = []
    changes.reserveCapacity(lines.count)
    let decode = timed {
        for line in lines {
            guard let change = try? line.withUnsafeBytes({ try decoder.decode(line: $0) }) else { continue }
            changes.append(change)
        }
    }
    guard changes.count == lines.count else {
        FileHandle.standardError.write(Data("ferry-bench: \(lines.count - changes.count) lines did not decode\n".utf8))
        return 65
    }
    if ProcessInfo.processInfo.environment["FERRY_BENCH_DECODE_ONLY"] != nil {
        print("decode \(perRecord(decode))")
        return 0
    }
    var json = JSONWriter(capacity: 4096)
    var same = 0
    let encode = timed {
        for (change, line) in zip(changes, lines) {
            json.reset()
            change.writeCloudKitJSON(to: &json)
            if json.bytes.withUnsafeBytes({ encoded in line.withUnsafeBytes { encoded.hasSameBytes(as: $0) } }) { same += 1 }
        }
    }
    var problems = 0
    let validate = timed { for change in changes { problems += validator.problems(in: change).count } }
    let preparer = ChangePreparer(validator: validator)
    var bytes = 0
    let prepare = timed { for change in changes { bytes += preparer.prepare(change).canonicalJSON.count } }
    let (fast, linesSeconds) = prepareLines()
    print("\(lines.count) records, \(same) canonical, \(problems) problems, \(bytes) bytes, \(fast) prepared from their lines")
    print(
        "decode \(perRecord(decode))  encode \(perRecord(encode))  validate \(perRecord(validate))  prepare \(perRecord(prepare))"
            + "  lines \(perRecord(linesSeconds))")
    return 0
}

/// Seconds `body` takes.
private func timed(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
