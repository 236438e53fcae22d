// Fuzzes the JSON scanner and parser: any bytes must give a value or a JSONSyntaxError, never a crash, and a parsed
// value must survive a canonical round trip unchanged.
import FerryCore
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let value = try? JSONParser.parse(bytes) else { return 0 }
    let canonical = JSONWriter.canonical(value)
    guard let again = try? JSONParser.parse(canonical), again == value else {
        fatalError("the canonical form of a parsed value does not parse back to the same value")
    }
    precondition(JSONWriter.canonical(again) == canonical, "the canonical form is not stable")
    return 0
}

runFuzzer { fuzz($0, $1) }
