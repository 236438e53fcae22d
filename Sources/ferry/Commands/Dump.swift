import ArgumentParser
import FerryCore
import FerryCoreData

/// `ferry dump`: a store's objects as NDJSON.
struct Dump: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a Core Data store's objects as NDJSON, model-aware.",
        discussion: """
            Each line is one object: its entity, primary key, object-ID URI, attributes decoded by their model type \
            (dates, UUIDs, transformable archives decoded; binary data as base64) and relationships as references. \
            The store is never modified; a store with a write-ahead log is read from a copy.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The Core Data SQLite store.")
    var store: String

    @Option(help: "Only this entity (with its sub-entities).")
    var entity: String?

    @OptionGroup var modelOptions: ModelOptions

    func run() async throws {
        try CommandRunner.run(global, label: "dump") { console in
            let opened = try CoreDataStore(path: store, model: modelOptions.choice)
            for note in opened.model.notes { console.warning(note) }
            var count = 0
            var json = JSONWriter(capacity: 4096)
            try opened.forEachObject(entity: entity) { object in
                json.reset()
                json.value(object.jsonValue)
                json.byte(UInt8(ascii: "\n"))
                try json.bytes.withUnsafeBytes { try console.raw($0) }
                count += 1
                if count % 10_000 == 0 { console.progress("dumping \(store): \(count) objects") }
            }
            console.flush()
            console.logger.info("dumped \(count) objects")
            return ExitCodes.success
        }
    }
}
