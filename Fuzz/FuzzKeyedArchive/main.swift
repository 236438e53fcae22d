// Fuzzes NSKeyedArchiver decoding: any plist must decode as an archive or be refused with a PlistError — never a
// crash, a hang or unbounded memory — including the record-ID and system-fields fast paths and the JSON rendering.
import FerryPlist
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let document = try? PlistDocument(bytes: bytes) else { return 0 }
    var limits = PlistLimits()
    limits.maxExpandedValues = 100_000
    if let top = try? document.decodeArchive(limits: limits) {
        for entry in top { _ = entry.value.jsonValue }
    }
    _ = try? document.archivedRecordID()
    _ = try? document.archivedSystemFields()
    return 0
}

runFuzzer { fuzz($0, $1) }
