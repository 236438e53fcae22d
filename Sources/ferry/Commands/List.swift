import ArgumentParser
import FerryBundle
import FerryCore
import FerryRecords

/// `ferry ls`: what a bundle holds, from its manifest alone.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a bundle's record types, zones, counts, assets and source.",
        discussion: """
            Reads only the bundle's metadata at its front; use `ferry verify` to check its contents.

            Examples:
              ferry ls cars.tar.gz
              ferry ls cars.tar.gz --json
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle (an archive, or an extracted bag directory).")
    var bundle: String

    func run() async throws {
        try CommandRunner.run(global, label: "ls") { console in
            let reader = try BundleReader(path: bundle)
            let manifest = reader.manifest
            try manifest.files.forEach { file in
                console.message(
                    "file",
                    [
                        "path": .string(file.path), "kind": .string(file.kind.rawValue),
                        "record_type": file.recordType.map { .string($0) } ?? .null, "zone": .string(file.zoneID.description),
                        "count": .integer(Int64(file.count)), "bytes": .integer(file.bytes),
                    ])
            }
            try console.message(
                "summary",
                [
                    "bundle": .string(bundle), "format_version": .integer(Int64(manifest.formatVersion)),
                    "created_at": .string(BundleManifest.timestampText(manifest.createdAt)),
                    "created_by": .string(manifest.createdBy), "source_kind": .string(manifest.source.kind),
                    "source": .string(manifest.source.description), "records": .integer(Int64(manifest.recordCount)),
                    "deletions": .integer(Int64(manifest.deletionCount)), "assets": .integer(Int64(manifest.assetCount)),
                    "asset_bytes": .integer(manifest.assetBytes), "payload_bytes": .integer(reader.payloadBytes),
                    "record_types": .array(manifest.recordTypeOrder.map { .string($0) }),
                ], streaming: "zones"
            ) { add in try reader.zones.forEach { try add(.string($0.description)) } }
            var typeNames: Set<String> = []
            try manifest.files.forEach { file in if let type = file.recordType { typeNames.insert(type) } }
            let types = typeNames.count
            console.line("bundle   \(bundle) (format \(manifest.formatVersion))")
            console.line("created  \(BundleManifest.timestampText(manifest.createdAt)) by \(manifest.createdBy)")
            console.line("source   \(manifest.source.kind): \(manifest.source.description)")
            console.line(
                "records  \(manifest.recordCount) in \(Formatting.count(types, "type")) and \(Formatting.count(try reader.zones.count(), "zone")); "
                    + "\(Formatting.count(manifest.deletionCount, "deletion"))")
            console.line("assets   \(manifest.assetCount) (\(Formatting.bytes(manifest.assetBytes)))")
            console.line("payload  \(Formatting.bytes(reader.payloadBytes))")
            console.line("")
            guard !console.json else { return ExitCodes.success }
            try Formatting.table(
                header: ["RECORD TYPE", "ZONE", "COUNT", "BYTES"], rightAligned: [2, 3],
                rows: { add in
                    try manifest.files.forEach { file in
                        try add([
                            file.kind == .records ? file.recordType ?? "" : "(deletions)", file.zoneID.description, "\(file.count)",
                            Formatting.bytes(file.bytes),
                        ])
                    }
                }, line: console.line)
            return ExitCodes.success
        }
    }
}
