// Fuzzes CloudKit record decoding and validation: any line must decode or be refused with a RecordError, never crash;
// a decoded change must re-encode canonically and decode back to itself.
import FerryCore
import FerryRecords
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let decoder = CloudKitJSONDecoder()
    guard let change = try? decoder.decode(line: UnsafeRawBufferPointer(start: data, count: size)) else { return 0 }
    _ = RecordValidator().problems(in: change)
    if case .record(let record) = change {
        _ = record.estimatedSize
        var schema = RecordSchema()
        _ = schema.conflicts(in: record)
        schema.add(record)
    }
    let canonical = change.canonicalJSON
    guard let again = try? decoder.decode(bytes: canonical), again.canonicalJSON == canonical else {
        fatalError("a decoded record does not round-trip through its canonical form")
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
