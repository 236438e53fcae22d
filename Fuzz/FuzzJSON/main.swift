// Fuzzes the JSON scanner and parser: any bytes must give a value or a JSONSyntaxError, never a crash, and a parsed
// value must survive a canonical round trip unchanged. Also JSONValueBoundary, which cuts documents into records: cut
// in two chunks anywhere it must end where it ends in one, and on a valid container or string only whitespace may
// follow the end it finds.
import FerryCore
import FerryJSON
import Foundation
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let end = checkBoundary(bytes)
    guard let value = try? JSONParser.parse(bytes) else { return 0 }
    if let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), [0x7B, 0x5B, 0x22].contains(first) {
        guard let end, bytes[end...].allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            fatalError("the boundary of a valid value is not its end")
        }
    }
    let canonical = JSONWriter.canonical(value)
    guard let again = try? JSONParser.parse(canonical), again == value else {
        fatalError("the canonical form of a parsed value does not parse back to the same value")
    }
    precondition(JSONWriter.canonical(again) == canonical, "the canonical form is not stable")
    return 0
}

/// Where the boundary ends the bytes' first value, checked against the same bytes cut in two.
private func checkBoundary(_ bytes: UnsafeRawBufferPointer) -> Int? {
    var whole = JSONValueBoundary()
    let end = whole.scan(bytes)
    let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var parts = JSONValueBoundary()
    let cut =
        parts.scan(UnsafeRawBufferPointer(rebasing: bytes[..<split]))
        ?? parts.scan(UnsafeRawBufferPointer(rebasing: bytes[split...])).map { $0 + split }
    precondition(cut == end, "the boundary depends on where the bytes were cut")
    return end
}

runFuzzer { fuzz($0, $1) }
