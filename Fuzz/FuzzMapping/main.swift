// Fuzzes what a mapping reads from users: the first byte chooses a plist / keyed-archive cache (even) or a YAML
// mapping plan (odd). Either maps or is refused with a MappingError — never a crash, a hang or unbounded memory.
import FerryMapping
import Foundation
import FuzzDriver

nonisolated(unsafe) let assets = try? StoreAssets()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, let assets else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 0 {
        var options = ArchiveCacheMapper.Options()
        options.assetThreshold = Int.max
        let mapper = ArchiveCacheMapper(bytes: bytes, name: "fuzz", options: options, assets: assets)
        try? mapper.run { _ in }
    } else {
        let plan = try? MappingPlan.decode(yaml: String(decoding: bytes, as: UTF8.self), file: "fuzz.yaml")
        _ = plan?.yaml()
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
