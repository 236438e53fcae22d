// Fuzzes the .xcdatamodel `contents` reader: any bytes must give a model or a CoreDataError — never a crash, a hang
// or unbounded memory.
import FerryCoreData
import FuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let model = try? ManagedObjectModel(xcdatamodelContents: bytes, file: "fuzz") else { return 0 }
    // Walking the hierarchy must terminate whatever parents the input names (cycles included).
    for entity in model.entities {
        _ = model.allAttributes(of: entity)
        _ = model.allRelationships(of: entity)
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
