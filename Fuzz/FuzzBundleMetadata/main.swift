// Fuzzes the reading of a bundle's metadata: bagit.txt, bag-info.txt, the checksum manifests, manifest.json and
// schema.json, split from the input at NUL NUL. Any bytes must be accepted or refused with a BundleError.
import FerryBundle
import FerryCore
import Foundation
import FuzzDriver

let names = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data/manifest.json", "data/schema.json"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var parts: [[UInt8]] = [[]]
    var index = 0
    while index < bytes.count {
        if index + 1 < bytes.count, bytes[index] == 0, bytes[index + 1] == 0 {
            parts.append([])
            index += 2
        } else {
            parts[parts.count - 1].append(bytes[index])
            index += 1
        }
    }
    var files: [String: [UInt8]] = [:]
    for (name, part) in zip(names, parts) where !(part.count == 1 && part[0] == UInt8(ascii: "-")) { files[name] = part }
    _ = try? BundleMetadata(files: files, archive: "fuzz")
    return 0
}

runFuzzer { fuzz($0, $1) }
