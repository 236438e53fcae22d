// Fuzzes property-list parsing (binary, XML, OpenStep): any bytes must give a document or a PlistError — never a
// crash, a hang or unbounded memory — and a tree must survive being written back as a binary plist. The streamed JSON
// (`convert`) must announce its exact size, refuse past its limit, and give the tree's JSON byte for byte.
import FerryCore
import FerryJSON
import FerryPlist
import FerryTesting
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let document = try? PlistDocument(bytes: bytes) else { return 0 }
    _ = try? PlistInspection(document)
    // Past 1 MiB of JSON the document shares objects heavily: its tree, written back without sharing, would be as
    // large, so the round trip below is for documents the stream accepts.
    guard let streamed = streamedJSON(document), let value = try? document.value(limits: fuzzLimits) else { return 0 }
    // A document the stream accepts within its limit is one the tree reads the same.
    precondition(streamed == JSONWriter.canonical(value.jsonValue), "the streamed JSON differs from the tree's")
    guard let again = try? PlistDocument(bytes: BinaryPlistWriter.write(value)).value(limits: fuzzLimits) else {
        fatalError("a plist tree did not survive a binary round trip")
    }
    precondition(again == value || "\(value)".contains("nan"), "a binary round trip changed the tree")
    return 0
}

/// The document's one-line JSON through the stream, or `nil` when it is refused (past 1 MiB: shared objects
/// repeated); its announced size must be what it writes.
func streamedJSON(_ document: PlistDocument) -> [UInt8]? {
    var limits = PlistLimits()
    limits.maxJSONBytes = 1 << 20
    guard let text = try? document.json(style: .canonical, limits: limits) else { return nil }
    var bytes: [UInt8] = []
    try? text.write { bytes += $0 }
    precondition(Int64(bytes.count) == text.byteCount, "the stream wrote \(bytes.count) bytes, announced \(text.byteCount)")
    return bytes
}

/// Smaller than the defaults, so each input stays fast.
let fuzzLimits: PlistLimits = {
    var limits = PlistLimits()
    limits.maxExpandedValues = 100_000
    return limits
}()

runFuzzer { fuzz($0, $1) }
