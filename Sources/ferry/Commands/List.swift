import ArgumentParser
import FerryBackend
import FerryBundle
import FerryCore
import FerryJSON
import FerryLocalStore
import FerryRecords
import FerryTransfer

/// `ferry ls`: what a bundle or a backend holds.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the record types, zones, counts and assets of a bundle, a local store or a PostgreSQL database.",
        discussion: """
            A bundle is listed from the metadata at its front (and its source); use `ferry verify` to check its \
            contents. A local store (a .ferry file, or local:PATH) is read record by record: each zone with its \
            sync token, each record type per zone with its count and bytes, the assets its records use.

            Examples:
              ferry ls cars.tar.gz
              ferry ls cars.tar.gz --json
              ferry ls app.ferry
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle (an archive, or an extracted bag directory) or local store.")
    var bundle: String

    func run() async throws {
        try await CommandRunner.run(global, label: "ls") { console in
            switch try await BackendOpener.open(bundle, verb: "ls", console: console) {
            case .bundle(let path): return try listBundle(path, console: console)
            case .backend(let store, let local):
                defer { try? local?.close() }
                let code = try await listBackend(store, console: console)
                if local == nil { try await store.close() }
                return code
            }
        }
    }

    private func listBackend(_ store: any RecordStore, console: Console) async throws -> Int32 {
        let listing = try await StoreListing.read(store)
        for row in listing.rows {
            console.message(
                "records",
                [
                    "record_type": .string(row.recordType), "zone": .string(row.zoneID.description), "count": .integer(Int64(row.count)),
                    "bytes": .integer(row.bytes),
                ])
        }
        var types: [String] = []
        for row in listing.rows where !types.contains(row.recordType) { types.append(row.recordType) }
        console.message(
            "summary",
            [
                "store": .string(store.name), "records": .integer(Int64(listing.recordCount)),
                "zones": .array(
                    listing.zones.map { zone in
                        [
                            "zone": .string(zone.zoneID.description), "records": .integer(Int64(zone.recordCount)),
                            "sync_token": zone.syncToken.map { .string($0.text) } ?? .null,
                        ]
                    }),
                "record_types": .array(types.map { .string($0) }), "assets": .integer(Int64(listing.assets)),
                "asset_bytes": .integer(listing.assetBytes),
            ])
        guard !console.json else { return ExitCodes.success }
        console.line("store    \(store.name)")
        console.line(
            "records  \(listing.recordCount) in \(Formatting.count(types.count, "type")) and \(Formatting.count(listing.zones.count, "zone"))")
        console.line("assets   \(listing.assets) (\(Formatting.bytes(listing.assetBytes)))")
        console.line("")
        try Formatting.table(
            header: ["ZONE", "RECORDS", "SYNC TOKEN"], rightAligned: [1],
            rows: { add in
                for zone in listing.zones { try add([zone.zoneID.description, "\(zone.recordCount)", zone.syncToken?.text ?? "-"]) }
            }, line: console.line)
        console.line("")
        try Formatting.table(
            header: ["RECORD TYPE", "ZONE", "COUNT", "BYTES"], rightAligned: [2, 3],
            rows: { add in
                for row in listing.rows { try add([row.recordType, row.zoneID.description, "\(row.count)", Formatting.bytes(row.bytes)]) }
            }, line: console.line)
        return ExitCodes.success
    }

    private func listBundle(_ bundle: String, console: Console) throws -> Int32 {
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
