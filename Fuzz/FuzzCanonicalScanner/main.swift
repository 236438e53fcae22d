// Fuzzes the canonical record scanner against the full checks: a line it accepts must decode, re-encode to the same
// bytes, fit the schema and CloudKit's rules, and have the key, DELETE_SELF targets and assets the decoder finds.
// The first byte picks the file: even, a fixed file of Car records in CarZone; odd, the file (type, zone and schema)
// of the record the line decodes to, so that valid records of any shape reach the scanner's deepest paths.
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import FuzzDriver

/// The fixed file's schema: the fields of the seed corpus's Car records, with a field of every type.
let carSchema: RecordSchema = {
    let types: [String: FieldType] = [
        "name": .scalar(.string), "added": .scalar(.timestamp), "lastUpdate": .scalar(.timestamp), "mileage": .scalar(.int64),
        "rating": .scalar(.double), "photo": .scalar(.asset), "data": .scalar(.bytes), "owner": .scalar(.reference),
        "owners": .list(.reference), "tags": .list(.string), "numbers": .list(.int64), "blobs": .list(.bytes), "where": .scalar(.location),
    ]
    return RecordSchema(recordTypes: ["Car": types], zones: [ZoneID(zoneName: "CarZone")])
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let line = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var oracle = CanonicalScanOracle(recordType: "Car", zoneID: ZoneID(zoneName: "CarZone"), schema: carSchema)
    if data[0] & 1 == 1, case .record(let record)? = try? CloudKitJSONDecoder().decode(bytes: line) {
        var schema = RecordSchema()
        schema.add(record)
        oracle = CanonicalScanOracle(recordType: record.recordType, zoneID: record.zoneID, schema: schema)
    }
    if let disagreement = oracle.verdict(line).disagreement {
        fatalError("\(disagreement): \(String(decoding: line, as: UTF8.self))")
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
