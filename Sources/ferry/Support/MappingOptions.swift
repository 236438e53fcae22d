import ArgumentParser
import FerryCore
import FerryCoreData
import FerryMapping
import Foundation

/// How a command chooses the mapping from a store's objects to records: `--mapping FILE` or `--preset NAME`.
struct MappingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A mapping plan (YAML, as `ferry plan` writes it).", valueName: "file"))
    var mapping: String?

    @Option(
        help: ArgumentHelp(
            "A preset: type-prefixed, scorebook, plain or nspersistentcloudkitcontainer (default: $FERRY_PRESET, else type-prefixed).",
            valueName: "name"))
    var preset: String?

    func validate() throws {
        if mapping != nil, preset != nil { throw ValidationError("choose one of --mapping and --preset") }
    }

    /// The plan for a store; `FERRY_PRESET` stands in for `--preset` (flags > environment > file > defaults).
    func plan(for store: CoreDataStore) throws -> MappingPlan {
        if let mapping {
            let text = String(decoding: try InputFileBytes.read(mapping), as: UTF8.self)
            return try MappingPlan.decode(yaml: text, file: mapping)
        }
        if let preset { return try MappingPlan.preset(preset, for: store.schema) }
        guard let name = ProcessInfo.processInfo.environment["FERRY_PRESET"], !name.isEmpty else {
            return try MappingPlan.preset("type-prefixed", for: store.schema)
        }
        do {
            return try MappingPlan.preset(name, for: store.schema)
        } catch {
            guard error.code == .unknownPreset else { throw error }
            throw MappingError(.unknownPreset, "FERRY_PRESET=\(name) (from the environment): \(error.message)", cause: error)
        }
    }
}

/// Reads small input files (plans) with Ferry's file errors.
enum InputFileBytes {
    static func read(_ path: String) throws -> [UInt8] {
        try FerryCore.InputFile.contents(of: path, limit: 16 << 20)
    }
}
