// Fuzzes property-list parsing (binary, XML, OpenStep): any bytes must give a document or a PlistError — never a
// crash, a hang or unbounded memory — and a tree must survive being written back as a binary plist.
import FerryPlist
import FerryTesting
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let document = try? PlistDocument(bytes: bytes) else { return 0 }
    _ = try? PlistInspection(document)
    guard let value = try? document.value(limits: fuzzLimits) else { return 0 }
    _ = value.jsonValue
    guard let again = try? PlistDocument(bytes: BinaryPlistWriter.write(value)).value(limits: fuzzLimits) else {
        fatalError("a plist tree did not survive a binary round trip")
    }
    precondition(again == value || "\(value)".contains("nan"), "a binary round trip changed the tree")
    return 0
}

/// Smaller than the defaults, so each input stays fast.
let fuzzLimits: PlistLimits = {
    var limits = PlistLimits()
    limits.maxExpandedValues = 100_000
    return limits
}()

runFuzzer { fuzz($0, $1) }
