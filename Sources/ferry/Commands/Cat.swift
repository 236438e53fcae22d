import ArgumentParser
import FerryBackend
import FerryBundle
import FerryCore
import FerryLocalStore
import FerryRecords
import FerryTransfer

/// `ferry cat`: the records of a bundle or a backend as NDJSON on stdout.
struct Cat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the records of a bundle (and its deletions), a local store or a database as NDJSON, in canonical CloudKit JSON.",
        discussion: """
            From a bundle, records come parents first, then deletions. Each file's checksum is checked as it streams; \
            if one does not match, ferry stops with exit 65 and the output so far must be discarded. From a local \
            store, the live records zone by zone, each zone in change order, with their change tags and times.

            Examples:
              ferry cat cars.tar.gz --type Note --zone CarZone
              ferry cat app.ferry --type Car
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The bundle (an archive, or an extracted bag directory) or local store.")
    var bundle: String

    @Option(name: .customLong("type"), help: "Only records of this type (repeatable).")
    var types: [String] = []

    @Option(name: .customLong("zone"), help: "Only records in this zone, by name or name@owner (repeatable).")
    var zones: [String] = []

    @Flag(help: "Leave deletions out.")
    var noDeletions = false

    func run() async throws {
        try await CommandRunner.run(global, label: "cat") { console in
            switch try await BackendOpener.open(bundle, verb: "cat", console: console) {
            case .bundle(let path): return try catBundle(path, console: console)
            case .backend(let store, let local):
                defer { try? local?.close() }
                let code = try await catBackend(store, console: console)
                if local == nil { try await store.close() }
                return code
            }
        }
    }

    /// A backend's records, as of one moment where it can be read so (every zone from one snapshot).
    private func catBackend(_ store: any RecordStore, console: Console) async throws -> Int32 {
        try await store.withSnapshot { reader in try await cat(reader, console: console) }
    }

    private func cat(_ store: any RecordStore, console: Console) async throws -> Int32 {
        let wantedTypes = types.isEmpty ? nil : Set(types)
        let zones = try await store.zoneTokens().filter { zone in
            self.zones.isEmpty || self.zones.contains(zone.zoneID.description)
                || (zone.zoneID.hasDefaultOwner && self.zones.contains(zone.zoneID.zoneName))
        }
        let known = Set(zones.flatMap { [$0.zoneID.description, $0.zoneID.zoneName] })
        for name in self.zones where !known.contains(name) {
            console.warning("--zone \(name): \(store.name) has no such zone; ferry ls \(bundle) lists its zones")
        }
        let newline = [UInt8(ascii: "\n")]
        var typesSeen: Set<String> = []
        for zone in zones {
            try await RecordFeed.forEachRecord(in: zone.zoneID, of: store, pageSize: 2_000) { record in
                typesSeen.insert(record.recordType)
                guard wantedTypes?.contains(record.recordType) ?? true else { return }
                try record.canonicalJSON.withUnsafeBytes { try console.raw($0) }
                try newline.withUnsafeBytes { try console.raw($0) }
            }
        }
        for type in types where !typesSeen.contains(type) {
            console.warning("--type \(type): no record of \(store.name) has this record type")
        }
        console.flush()
        return ExitCodes.success
    }

    private func catBundle(_ bundle: String, console: Console) throws -> Int32 {
        let reader = try BundleReader(path: bundle)
        let selection = BundleReader.Selection(
            recordTypes: types.isEmpty ? nil : Set(types), zoneNames: zones.isEmpty ? nil : Set(zones),
            includeDeletions: !noDeletions)
        let newline = [UInt8(ascii: "\n")]
        try reader.forEachChangeLine(selection) { line in
            try console.raw(line)
            try newline.withUnsafeBytes { try console.raw($0) }
        }
        console.flush()
        return ExitCodes.success
    }
}
