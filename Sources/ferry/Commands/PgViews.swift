import ArgumentParser
import FerryCore
import FerryJSON
import FerryPostgres
import FerryTransfer

/// `ferry pg-views`: typed views of the records in a PostgreSQL database, one per record type.
struct PgViews: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pg-views",
        abstract: "Create a view per record type in a PostgreSQL database, with a typed column per field.",
        discussion: """
            Each view has the record's name, zone, creation and modification times and change tag, then one column per \
            field of that type: STRING text, INT64 bigint, DOUBLE double precision, TIMESTAMP timestamptz, BYTES bytea, \
            REFERENCE the record name it points at, ASSET its SHA-256, LOCATION and lists jsonb. The types come from \
            the records copied in, so run it again after copies that add fields or types; views of types that hold no \
            records any more are dropped. Views go into --view-schema (default: the records' schema followed by _view).

            Examples:
              ferry pg-views postgres://me@db.example.com/app
              psql app -c 'SELECT name, added FROM ferry_view."Car" ORDER BY added'
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The database: postgres://user@host[:port]/database[?schema=…].")
    var database: String

    @Option(help: ArgumentHelp("The schema the views go into (default: SCHEMA_view).", valueName: "name"))
    var viewSchema: String?

    func run() async throws {
        try await CommandRunner.run(global, label: "pg-views") { console in
            guard case .postgres(let url) = try Endpoint.source(database) else {
                throw TransferError(.unsupported, "\(Endpoint.redacted(database)) is not a PostgreSQL database; pg-views needs a postgres:// URL")
            }
            let store = try await PostgresOpener.open(url, console: console, migrate: false)
            // Views of an earlier layout would stop working once it is migrated.
            do { try store.requireCurrentLayout() } catch {
                try? await store.close()
                throw error
            }
            let schema = viewSchema ?? store.database.settings.schema + "_view"
            guard PostgresSettings.isPlainIdentifier(schema) else {
                try? await store.close()
                throw ValidationError("--view-schema must be a plain identifier (letters, digits and _, not starting with a digit): \(schema)")
            }
            let made: PostgresViews.Made
            do {
                if store.layout < PostgresSchema.version {
                    // A schema that views held at layout 6: the views this run remakes go (they are made again below),
                    // so that the migration can finish, unless other views hold it still.
                    _ = try await PostgresViews.dropHoldingViews(in: store.database, viewSchema: schema)
                    _ = try await PostgresOpener.migrateSchema(store.database, console: console)
                }
                made = try await PostgresViews.create(in: store.database, viewSchema: schema)
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
            for (type, field, types) in made.mixed {
                console.warning("\(type).\(field) holds \(types.joined(separator: " and ")) values; its column is jsonb")
            }
            for view in made.views {
                console.message(
                    "view",
                    [
                        "schema": .string(schema), "record_type": .string(view.recordType),
                        "columns": .array(view.columns.map { .object(["name": .string($0.name), "type": .string($0.type)]) }),
                    ])
                if !console.quiet {
                    console.line("\(schema).\"\(view.recordType)\": " + view.columns.map { "\($0.name) \($0.type)" }.joined(separator: ", "))
                }
            }
            for name in made.dropped {
                console.message("dropped", ["schema": .string(schema), "record_type": .string(name)])
                if !console.quiet { console.line("\(schema).\"\(name)\": dropped (no records of this type any more)") }
            }
            console.message(
                "summary", ["schema": .string(schema), "views": .integer(Int64(made.views.count)), "dropped": .integer(Int64(made.dropped.count))])
            return ExitCodes.success
        }
    }
}
