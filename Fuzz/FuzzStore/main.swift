// Fuzzes the Core Data store reader through a store's bookkeeping, which no other target reaches: the input builds
// Z_PRIMARYKEY (entity numbers, names, Z_SUPER parents, Z_MAX), Z_METADATA (its plist taken from the input's bytes),
// entity tables with columns of guessed types and foreign-key indexes, join tables and a few rows, in an SQLite file
// on /dev/shm (memory-backed; the reader opens stores by path). Then inspect, dump (every object, the uncarried
// ones) and the type-prefixed mapping run over it. Each must finish or throw one of Ferry's errors — never crash,
// hang or grow memory without bound (a Z_SUPER loop did).
import FerryCore
import FerryCoreData
import FerryMapping
import FerryTesting
import Foundation
import FuzzDriver

/// Reads the input a byte at a time; zeros once it runs out.
struct Bytes {
    let data: UnsafeBufferPointer<UInt8>
    var index = 0

    mutating func next() -> UInt8 {
        defer { index += 1 }
        return index < data.count ? data[index] : 0
    }

    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(data.count, index + count)
        defer { index = max(index, end) }
        return index < end ? Array(data[index..<end]) : []
    }
}

let names = ["Car", "Bus", "Note", "Truck", "Item", "Tag", "CHANGE", "Vehicle"]
let columns: [(name: String, type: String)] = [
    ("ZNAME", "VARCHAR"), ("ZADDED", "TIMESTAMP"), ("ZCOUNT", "INTEGER"), ("ZDATA", "BLOB"), ("ZPRICE", "DECIMAL"),
    ("ZCAR", "INTEGER"), ("ZNOTE", "INTEGER"), ("Z_FOK_CAR", "INTEGER"), ("Z2_CAR", "INTEGER"), ("ZFLAG", "INTEGER"),
]
let path =
    FileManager.default.fileExists(atPath: "/dev/shm")
    ? "/dev/shm/ferry-fuzz-store-\(getpid()).sqlite" : NSTemporaryDirectory() + "ferry-fuzz-store-\(getpid()).sqlite"
nonisolated(unsafe) let assets = try? StoreAssets()

func statements(_ input: inout Bytes) -> [SQLiteFile.Statement] {
    var sql: [SQLiteFile.Statement] = [
        .init("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"),
        .init("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"),
    ]
    let plist = input.take(Int(input.next()) * 2)
    sql.append(.init("INSERT INTO Z_METADATA VALUES (1, ?, ?)", [.text("6A0B7C1D-0000-4000-8000-00000000000\(input.next() % 10)"), .bytes(plist)]))
    let entityCount = Int(input.next() % 6)
    var entities: [(number: Int64, name: String)] = []
    for _ in 0..<entityCount {
        let flags = input.next()
        let number: Int64 = flags & 0x80 != 0 ? 16000 + Int64(flags & 3) : Int64(flags % 8) + 1
        let name = names[Int(input.next()) % names.count]
        let parent = Int64(input.next() % 9)  // 0 (a root) or a number that may loop, dangle or point at itself
        sql.append(
            .init("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)", [.integer(number), .text(name), .integer(parent), .integer(Int64(input.next()))]))
        entities.append((number, name))
    }
    // Entity tables: one per name used, with guessed columns, their foreign-key indexes and a few rows.
    for name in Set(entities.map(\.name)).sorted() {
        let table = "Z" + name.uppercased()
        var chosen: [(name: String, type: String)] = []
        let mask = UInt16(input.next()) << 8 | UInt16(input.next())
        for (index, column) in columns.enumerated() where mask & (1 << index) != 0 { chosen.append(column) }
        let definitions = (["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"] + chosen.map { "\($0.name) \($0.type)" })
        sql.append(.init("CREATE TABLE \(table) (\(definitions.joined(separator: ", ")))"))
        for column in chosen where column.type == "INTEGER" && input.next() & 1 == 1 {
            sql.append(.init("CREATE INDEX \(table)_\(column.name)_INDEX ON \(table) (\(column.name))"))
        }
        for row in 0..<Int(input.next() % 4) {
            var values: [SQLiteFile.Value] = [.integer(Int64(row + 1)), .integer(Int64(input.next() % 10)), .integer(1)]
            for column in chosen {
                switch input.next() % 6 {
                case 0: values.append(.null)
                case 1: values.append(.integer(Int64(Int8(bitPattern: input.next()))))
                case 2: values.append(.double(Double(input.next()) / 3))
                case 3: values.append(.text(String(decoding: input.take(Int(input.next() % 12)), as: UTF8.self)))
                case 4: values.append(.bytes(input.take(Int(input.next() % 24))))
                default: values.append(column.type == "INTEGER" ? .integer(Int64(input.next() % 4)) : .text("x"))
                }
            }
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            sql.append(.init("INSERT INTO \(table) VALUES (\(marks))", values))
        }
    }
    // A join table between the first two entities, sometimes.
    if entities.count >= 2, input.next() & 1 == 1 {
        let (a, b) = (entities[0], entities[1])
        let table = "Z_\(a.number)TAGS"
        sql.append(.init("CREATE TABLE \(table) (Z_\(a.number)\(a.name.uppercased()) INTEGER, Z_\(b.number)TAGS INTEGER)"))
        for _ in 0..<Int(input.next() % 3) {
            sql.append(.init("INSERT INTO \(table) VALUES (?, ?)", [.integer(Int64(input.next() % 4)), .integer(Int64(input.next() % 4))]))
        }
    }
    return sql
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, let assets else { return 0 }
    var input = Bytes(data: UnsafeBufferPointer(start: data, count: size))
    guard (try? SQLiteFile.write(statements(&input), to: path)) != nil else { return 0 }
    defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    for choice in [ModelChoice.automatic, .inferred] {
        guard let store = try? CoreDataStore(path: path, model: choice) else { continue }
        _ = try? StoreInspection(store)
        try? store.forEachObject { _ in }
        try? store.forEachUncarriedObject { _ in }
        if let plan = try? MappingPlan.preset("type-prefixed", for: store.schema),
            let mapper = try? StoreRecordMapper(store: store, plan: plan, assets: assets)
        {
            try? mapper.run { _ in }
        }
    }
    return 0
}

runFuzzer { fuzz($0, $1) }
