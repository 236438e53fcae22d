// swift-tools-version: 6.1
import Foundation
import PackageDescription

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
        .library(name: "FerryJSON", targets: ["FerryJSON"]),
        .library(name: "FerryDirectIO", targets: ["FerryDirectIO"]),
        .library(name: "FerryMemory", targets: ["FerryMemory"]),
        .library(name: "FerrySorting", targets: ["FerrySorting"]),
        .library(name: "FerryTextInput", targets: ["FerryTextInput"]),
        .library(name: "FerryRecords", targets: ["FerryRecords"]),
        .library(name: "FerryBundle", targets: ["FerryBundle"]),
        .library(name: "FerryPlist", targets: ["FerryPlist"]),
        .library(name: "FerryCoreData", targets: ["FerryCoreData"]),
        .library(name: "FerryMapping", targets: ["FerryMapping"]),
        .library(name: "FerryBackend", targets: ["FerryBackend"]),
        .library(name: "FerryLocalStore", targets: ["FerryLocalStore"]),
        .library(name: "FerryPostgres", targets: ["FerryPostgres"]),
        .library(name: "FerryTransfer", targets: ["FerryTransfer"]),
        .library(name: "FerryTesting", targets: ["FerryTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Up to the next minor version: bulk writes use COPY's binary format through how 1.33 builds its COPY statement
        // (see CopyRows in FerryPostgres).
        .package(url: "https://github.com/vapor/postgres-nio", .upToNextMinor(from: "1.33.2")),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // libarchive, through a tiny system-library shim (engineering.md §2).
        .systemLibrary(
            name: "CArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]
        ),
        // glibc's malloc_trim, which Swift's Glibc module leaves out: the bundle writer returns phase one's memory.
        .systemLibrary(name: "CMalloc"),
        // O_DIRECT, which Swift's Glibc module leaves out: bundles and their spool are written around the page cache.
        .systemLibrary(name: "CDirectIO"),
        // SQLite's process-wide configuration (sqlite3_config is variadic, which Swift cannot call).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // zlib, through a system-library shim: raw DEFLATE for Core Data's model cache.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // Zstandard, through a system-library shim: a .tar.zst bundle's multi-threaded compressor with small jobs.
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]),
        // Shared basics: the error protocol and exit categories, hashing, files (atomic, buffered, locked, scratch).
        .target(
            name: "FerryCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // JSON: a strict parser, a streaming scanner, the canonical writer, record text cut from NDJSON and documents.
        .target(name: "FerryJSON", dependencies: ["FerryCore"]),
        // Writes around the page cache and block-shifting prepends (O_DIRECT, fallocate), for the bundle writer.
        .target(name: "FerryDirectIO", dependencies: ["FerryCore", "CDirectIO"]),
        // glibc's malloc_trim, for the two phases that free a lot before allocating a lot (bundle writing, bulk loads).
        .target(name: "FerryMemory", dependencies: ["CMalloc"]),
        // Text inputs: bounded line reading, record text cut from NDJSON and JSON documents, gzip and Zstandard.
        .target(name: "FerryTextInput", dependencies: ["FerryCore", "FerryJSON", "CZlib", "CZstd"]),
        // External sorting and sorted sets in bounded memory (scratch files past a few MiB).
        .target(name: "FerrySorting", dependencies: ["FerryCore"]),
        // The neutral record model: records, field values, CloudKit JSON, canonical form, validation, schema.
        .target(name: "FerryRecords", dependencies: ["FerryCore", "FerryTextInput", "FerryJSON", "FerrySorting"]),
        // Property lists (binary, XML, OpenStep) and NSKeyedArchiver archives, decoded safely from untrusted bytes.
        .target(name: "FerryPlist", dependencies: ["FerryCore", "FerryJSON"]),
        // Core Data SQLite stores: safe opening, model discovery and decoding, entity and relationship mapping, objects.
        .target(
            name: "FerryCoreData",
            dependencies: [
                "FerryCore", "FerryJSON", "FerryPlist", "CZlib", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Mapping plans and presets: objects of a source → records (names, zones, fields, references, assets).
        .target(
            name: "FerryMapping",
            dependencies: [
                "FerryCore", "FerryJSON", "FerryRecords", "FerryPlist", "FerryCoreData", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The backend contract: record operations and outcomes, zones, change feeds, assets, the copy journal, the
        // in-memory reference store.
        .target(name: "FerryBackend", dependencies: ["FerryCore", "FerryJSON", "FerryRecords"]),
        // The embedded local sync store: one SQLite file with CloudKit's semantics (the default backend).
        .target(
            name: "FerryLocalStore",
            dependencies: [
                "FerryCore", "FerryMemory", "FerryJSON", "FerrySorting", "FerryRecords", "FerryBackend", "CSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API for the statements every copied record runs (LocalStoreBatch+StateQuery, +RecordWrite).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The PostgreSQL backend: connection settings as libpq reads them, the schema, the backend contract over it.
        .target(
            name: "FerryPostgres",
            dependencies: [
                "FerryCore", "FerryJSON", "FerryRecords", "FerryBackend", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Copies between sources and targets: change sources, the local-store importer (conflicts, resume), diffs.
        .target(
            name: "FerryTransfer",
            dependencies: [
                "FerryCore", "FerryJSON", "FerrySorting", "FerryRecords", "FerryBackend", "FerryCoreData", "FerryMapping", "FerryBundle",
                "FerryLocalStore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Archive bundles: BagIt layout, streaming writer, verifying reader, libarchive wrapper.
        .target(
            name: "FerryBundle",
            dependencies: [
                "FerryCore", "FerryDirectIO", "FerryMemory", "FerryTextInput", "FerryJSON", "FerrySorting", "FerryRecords", "CArchive", "CZstd",
            ]
        ),
        // Builders for records, NDJSON inputs, bundles and Core Data stores, used by the tests and to write Samples/.
        .target(
            name: "FerryTesting",
            dependencies: [
                "FerryCore", "FerryJSON", "FerryRecords", "FerryBundle", "FerryPlist", "CArchive", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The command-line tool: parses, calls the library, prints.
        .executableTarget(
            name: "ferry",
            dependencies: [
                "FerryCore", "FerryTextInput", "FerryJSON", "FerryRecords", "FerryBundle", "FerryPlist", "FerryCoreData", "FerryMapping",
                "FerryBackend", "FerryLocalStore", "FerryMemory",
                "FerryPostgres",
                "FerryTransfer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Benchmark drivers for Scripts/bench (not installed): Ferry's side of each measured workload.
        .executableTarget(
            name: "ferry-bench",
            dependencies: ["FerryCore", "FerryJSON", "FerryPlist", "FerryRecords", "FerryBundle", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/FerryBench"
        ),
        .testTarget(name: "FerryTextInputTests", dependencies: ["FerryCore", "FerryTextInput", "FerryTesting", "CZstd"]),
        .testTarget(name: "FerryCoreTests", dependencies: ["FerryCore", "FerryJSON", "FerryTesting"]),
        .testTarget(name: "FerryDirectIOTests", dependencies: ["FerryCore", "FerryDirectIO", "FerryTesting"]),
        .testTarget(
            name: "FerryPostgresTests",
            dependencies: [
                "FerryCore", "FerryRecords", "FerryBackend", "FerryPostgres", "FerryTesting", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(name: "FerryJSONTests", dependencies: ["FerryCore", "FerryJSON"]),
        .testTarget(name: "FerrySortingTests", dependencies: ["FerryCore", "FerrySorting", "FerryTesting"]),
        .testTarget(name: "FerryRecordsTests", dependencies: ["FerryCore", "FerryJSON", "FerryRecords", "FerryTesting"]),
        .testTarget(name: "FerryPlistTests", dependencies: ["FerryCore", "FerryJSON", "FerryPlist", "FerryTesting"], exclude: ["Helpers"]),
        .testTarget(name: "FerryCoreDataTests", dependencies: ["FerryCore", "FerryJSON", "FerryPlist", "FerryCoreData", "FerryTesting"]),
        .testTarget(
            name: "FerryMappingTests",
            dependencies: ["FerryCore", "FerryRecords", "FerryPlist", "FerryCoreData", "FerryMapping", "FerryTesting"]
        ),
        .testTarget(
            name: "FerryTransferTests",
            dependencies: ["FerryCore", "FerryRecords", "FerryBackend", "FerryBundle", "FerryLocalStore", "FerryTransfer", "FerryTesting"]),
        .testTarget(
            name: "FerryLocalStoreTests",
            dependencies: [
                "FerryCore", "FerryJSON", "FerryRecords", "FerryBackend", "FerryLocalStore", "FerryTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "FerryBackendTests",
            dependencies: [
                "FerryCore", "FerryRecords", "FerryBackend", "FerryBundle", "FerryLocalStore", "FerryPostgres", "FerryTransfer", "FerryTesting",
            ]),
        .testTarget(
            name: "FerryBundleTests",
            dependencies: ["FerryCore", "FerryJSON", "FerrySorting", "FerryRecords", "FerryBundle", "FerryTesting", "CZstd"]),
        .testTarget(
            name: "FerryEndToEndTests",
            dependencies: ["FerryCore", "FerryJSON", "FerryRecords", "FerryPlist", "FerryTesting"],
            exclude: ["Snapshots"]
        ),
    ]
)

// Fuzz targets (Scripts/fuzz): built only with FERRY_FUZZ=1, with every module instrumented by
// `-Xswiftc -sanitize=fuzzer,address` from the script. Each hands its entry point to libFuzzer's driver.
if ProcessInfo.processInfo.environment["FERRY_FUZZ"] != nil {
    package.targets.append(.target(name: "FuzzDriver", path: "Fuzz/FuzzDriver"))
    for (name, dependencies) in [
        ("FuzzJSON", ["FerryCore", "FerryJSON"]),
        ("FuzzRecordText", ["FerryCore", "FerryJSON", "FerryTextInput"]),
        ("FuzzRecordDecoder", ["FerryCore", "FerryJSON", "FerryRecords"]),
        ("FuzzCanonicalScanner", ["FerryCore", "FerryRecords", "FerryTesting"]),
        ("FuzzTranscoder", ["FerryCore", "FerryRecords", "FerryBundle", "FerryTesting"]),
        ("FuzzBundleMetadata", ["FerryCore", "FerryBundle"]),
        ("FuzzPlist", ["FerryCore", "FerryJSON", "FerryPlist", "FerryTesting"]),
        ("FuzzKeyedArchive", ["FerryPlist"]),
        ("FuzzModelXML", ["FerryCoreData"]),
        ("FuzzCompiledModel", ["FerryCoreData"]),
        ("FuzzMapping", ["FerryMapping"]),
        ("FuzzStore", ["FerryCore", "FerryCoreData", "FerryMapping", "FerryTesting"]),
    ] {
        package.targets.append(
            .executableTarget(
                name: name, dependencies: (dependencies + ["FuzzDriver"]).map { .target(name: $0) }, path: "Fuzz/\(name)",
                linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]))
    }
}

// Every Swift target: existential types spelled `any`, and members visible only from modules a file imports.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
}
