import ArgumentParser
import FerryCore
import FerryCoreData
import FerryLocalStore
import FerryPostgres
import FerryTransfer
import Logging

/// Opens any source by what it is: a bundle, a local store (read-only) or a Core Data store through a mapping.
struct SourceOpener {
    var modelOptions: ModelOptions
    var mappingOptions: MappingOptions
    var cacheOptions: CacheOptions
    var incrementalOptions: IncrementalOptions
    /// `--type` and `--zone`, for the verbs that have them.
    var selection: SelectionOptions? = nil
    var tempDir: String?

    /// The source, narrowed by `--since` and `--pending-only`.
    func open(_ path: String, console: Console) async throws -> any ChangeSource {
        let source = try await openUnfiltered(path, console: console)
        var filter = incrementalOptions.filter(for: source)
        if let selection, !selection.types.isEmpty { filter.recordTypes = Set(selection.types) }
        if let selection, !selection.zones.isEmpty { filter.zoneNames = Set(selection.zones) }
        // Reading (and mapping) runs on its own thread, beside the writing.
        return PipelinedChangeSource(filter.isActive ? FilteredChangeSource(source, filter: filter) : source)
    }

    private func openUnfiltered(_ path: String, console: Console) async throws -> any ChangeSource {
        let endpoint = try Endpoint.source(path)
        console.logger.info("source: \(endpoint.path), read as \(endpoint.kindDescription)")
        let position = incrementalOptions.since?.position
        if position != nil {
            switch endpoint {
            case .postgres, .localStore: break
            default:
                throw ValidationError(
                    "--since \(position?.description.prefix(12) ?? "")… is where a read of a database's change feed ended; \(endpoint.path) "
                        + "is \(endpoint.kindDescription), which has none: give --since a time instead")
            }
        }
        switch endpoint {
        case .bundle(let path):
            return try BundleChangeSource(path: path, temporaryDirectory: tempDir)
        case .postgres(let url):
            // A source is read as it is: neither created nor migrated. Its records are counted only for a progress line.
            return try await BackendChangeSource.open(
                try await PostgresOpener.open(url, console: console, migrate: false), kind: "postgres", since: position,
                counting: console.drawsProgress)
        case .localStore(let path):
            return try await BackendChangeSource.open(
                LocalRecordStore(try LocalStore(path: path, readOnly: true)), kind: "local", since: position, counting: console.drawsProgress)
        case .archiveCache(let path):
            return try ArchiveChangeSource(
                path: path,
                options: cacheOptions.options(
                    preset: mappingOptions.preset, statusField: incrementalOptions.statusField, pendingOnly: incrementalOptions.pendingOnly),
                temporaryDirectory: tempDir)
        case .coreData(let path):
            let store = try CoreDataStore(path: path, model: modelOptions.choice, temporaryDirectory: tempDir)
            console.logModel(store)
            let source = try CoreDataChangeSource(store: store, path: path, plan: try mappingOptions.plan(for: store), temporaryDirectory: tempDir)
            // The first pass reads every object before the first record comes: its own progress line (counting its
            // objects scans the store, so only when it is drawn).
            if console.drawsProgress {
                let meter = ProgressMeter(console: console, label: "reading \(path) (names and zones)", unit: "objects", total: nil)
                source.onFirstPass { done, total in meter.update(Int64(done), total: Int64(total)) }
            }
            return source
        }
    }
}
