// Fuzzes how pack cuts a file into records (LineReader.nextRecordText, over DecompressingInput): any bytes, as a file
// with a small record limit, must give records, over-long records or a CoreError, never a crash. When the file is not
// compressed, every record's bytes must be the file's bytes at its position, positions must rise, and its line must
// be one more than the newlines before it.
import FerryCore
import FerryJSON
import FerryTextInput
import Foundation
import FuzzDriver

#if canImport(Glibc)
    import Glibc
#endif

/// One scratch file, written again for every input.
private let path = NSTemporaryDirectory() + "ferry-fuzz-record-text-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { fatalError("cannot write \(path)") }
    guard let reader = try? LineReader(path: path, maxLineLength: 64, skippingByteOrderMark: true, decompressing: true) else { return 0 }
    var last: Int64 = -1
    do {
        while let item = try reader.nextRecordText() {
            switch item {
            case .bytes(let text, let position):
                guard reader.compression == nil else { continue }
                precondition(position.offset > last, "positions do not rise")
                last = position.offset
                let start = Int(position.offset)
                precondition(start + text.count <= bytes.count, "a record runs past the file")
                precondition(bytes[start..<(start + text.count)].elementsEqual(text), "a record is not the file's bytes at its position")
                let newlines = bytes[..<start].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                precondition(position.line == newlines + 1, "a record's line is not where it starts")
            case .tooLong(let position, _):
                precondition(position.offset > last, "positions do not rise")
                last = position.offset
            }
        }
    } catch is CoreError {
        return 0
    } catch {
        fatalError("an error that is not a CoreError: \(error)")
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
