import ArgumentParser
import FerryCore
import FerryCoreData
import FerryJSON
import Foundation

/// `ferry dump`: a store's objects as NDJSON.
struct Dump: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a Core Data store's objects as NDJSON, model-aware.",
        discussion: """
            Each line is one object: its entity, primary key, object-ID URI, attributes decoded by their model type \
            (dates, UUIDs, transformable archives decoded; binary data as base64) and relationships as references. \
            The store is never modified; a store with a write-ahead log is read from a copy.

            Examples:
              ferry dump Store.sqlite --entity SBMatch
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The Core Data SQLite store.")
    var store: String

    @Option(help: "Only this entity (with its sub-entities).")
    var entity: String?

    @OptionGroup var modelOptions: ModelOptions

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "dump") { console in
            let started = Date()
            let opened = try CoreDataStore(path: store, model: modelOptions.choice)
            console.logModel(opened)
            let summary = try StoreDump.run(
                opened, entity: entity, messageType: console.json ? "object" : nil,
                write: { bytes in try bytes.withUnsafeBytes { try console.raw($0) } },
                progress: { count in console.progress("dumping \(store): \(count) objects") })
            let (counts, total, problems) = (summary.counts, summary.total, summary.problems)
            console.flush()
            // What the dump left out (of the whole store): each object a warning, counted in the summary.
            var warnings = WarningLog(console: console)
            var notCarried = 0
            if entity == nil {
                try opened.forEachUncarriedObject { object in
                    notCarried += 1
                    warnings.add(object.warning)
                }
            }
            let seconds = Date().timeIntervalSince(started)
            console.message(
                "summary",
                [
                    "store": .string(store), "model_source": .string(opened.model.source.kind), "objects": .integer(Int64(total)),
                    "problems": .integer(Int64(problems)), "not_carried": .integer(Int64(notCarried)), "seconds": .number(seconds),
                    "entities": .object(JSONObject(counts.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .integer(Int64($0.value))) })),
                ])
            let perEntity = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            console.note(
                "dumped \(total) objects (\(perEntity.isEmpty ? "none" : perEntity)) from \(store) in \(Formatting.seconds(since: started))"
                    + (problems > 0 ? "; \(problems) problems (see \"problems\" in the objects)" : "")
                    + (notCarried > 0 ? "; \(notCarried) objects of the store not carried (see the warnings)" : ""))
            return ExitCodes.success
        }
    }
}
