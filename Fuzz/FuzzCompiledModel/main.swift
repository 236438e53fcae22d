// Fuzzes compiled-model reading: a `.mom` keyed archive, and (when the first byte is odd) a store's model cache, raw
// DEFLATE around the same archive. Any bytes must give a model or a CoreDataError — never a crash, a hang or
// unbounded memory.
import FerryCoreData
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let model =
        data[0] & 1 == 1
        ? try? ManagedObjectModel(modelCache: bytes, file: "fuzz") : try? ManagedObjectModel(compiled: bytes, file: "fuzz")
    guard let model else { return 0 }
    for entity in model.entities {
        _ = model.allAttributes(of: entity)
        _ = model.allRelationships(of: entity)
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
