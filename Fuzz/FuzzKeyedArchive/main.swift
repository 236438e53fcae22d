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
    if size > 0 { checkShapeReader(bytes) }
    return 0
}

/// The shape reader answers what a full read answers: for the input (read in full, then from its own shape) and for
/// copies of it with one byte changed (from the shape when the byte is one of the name's, in full otherwise).
func checkShapeReader(_ bytes: [UInt8]) {
    func full(_ bytes: [UInt8]) -> ArchivedRecordID? {
        bytes.withUnsafeBytes { buffer in try? BinaryPlist.withPlist(borrowing: buffer) { try $0.archivedRecordID() } }
    }
    var reader = RecordIDArchiveReader()
    func shaped(_ bytes: [UInt8]) -> ArchivedRecordID? { bytes.withUnsafeBytes { try? reader.recordID($0) } }
    let expected = full(bytes)
    guard shaped(bytes) == expected, shaped(bytes) == expected else { fatalError("the shape reader disagrees with a full read") }
    for step in 0..<4 {
        var changed = bytes
        let position = (Int(bytes[step % bytes.count]) * 31 + step * 7) % bytes.count
        changed[position] = changed[position] &+ UInt8(1 + step)
        guard shaped(changed) == full(changed) else { fatalError("the shape reader disagrees with a full read at \(position)") }
    }
}

runFuzzer { fuzz($0, $1) }
