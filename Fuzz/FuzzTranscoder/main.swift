// Fuzzes pack's fast path against the full decoder: a line the transcoder rewrites must get the bytes, type, zone and
// assets that decoding it and writing the record canonically give, and a line the line preparer takes must be a
// valid record prepared exactly as the decoded one is (canonical JSON, key, references, assets, layout). An input of
// two lines is also read as a model and a line prepared after it: the second may then go through the first's shape
// (RecordLineShape), and must still be prepared exactly as decoding it prepares it.
import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import FuzzDriver

/// `path`-form assets resolve to a made-up file, so that those lines reach the transcoder's asset path.
let decoder = CloudKitJSONDecoder(assetResolver: { path, fileName in
    Asset(sha256: SHA256Hasher.digest(Array(path.utf8)), size: Int64(path.utf8.count), fileName: fileName)
})
let oracle = TranscodeOracle(decoder: decoder)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    if let disagreement = oracle.verdict(line).disagreement {
        fatalError("transcoder: \(disagreement): \(String(decoding: line, as: UTF8.self))")
    }
    var lines = LinePreparer(decoder: decoder, validator: RecordValidator())
    if let disagreement = oracle.preparedDisagreement(line, lines: &lines) {
        fatalError("line preparer: \(disagreement): \(String(decoding: line, as: UTF8.self))")
    }
    if let newline = line.firstIndex(of: 0x0A) {
        let (model, next) = (Array(line[..<newline]), Array(line[(newline + 1)...]))
        var shaped = LinePreparer(decoder: decoder, validator: RecordValidator())
        _ = model.withUnsafeBytes { shaped.prepare($0) }
        if let disagreement = oracle.preparedDisagreement(next, lines: &shaped) {
            fatalError("line shape: \(disagreement): \(String(decoding: line, as: UTF8.self))")
        }
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
