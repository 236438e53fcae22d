import FerryCore
import FerryPostgres
import Logging

/// Opens a PostgreSQL database named by a URL: settings as libpq reads them, a checked connection, Ferry's schema
/// created or brought up to date.
enum PostgresOpener {
    /// Opens the database at `url`; an operation whose connection is lost is tried again `retries` times.
    static func open(_ url: String, console: Console, migrate: Bool = true, retries: Int = 5) async throws -> PostgresRecordStore {
        let settings = try PostgresSettings(url: url)
        for warning in settings.warnings { console.warning(warning) }
        var logger = Logger(label: "ferry.postgres")
        // The pool's own logging: what it reports is Ferry's to explain, so only its errors pass.
        logger.logLevel = console.verbose ? .warning : .error
        var schedule = PostgresDatabase.Retries()
        schedule.count = retries
        schedule.onRetry = { message in console.warning(message) }
        let database = try await PostgresDatabase.open(settings, logger: logger, retries: schedule)
        for warning in database.warnings { console.warning(warning) }
        var layout = PostgresSchema.version
        do {
            if migrate {
                if let warning = try await database.textEncodingWarning() { console.warning(warning) }
                layout = try await migrateSchema(database, console: console)
            } else {
                // Read as it is: a source is never written, so an earlier layout is read in its own form.
                layout = try await PostgresSchema.readableVersion(database)
                if layout == 0 {
                    throw PostgresBackendError(
                        .noData, "\(settings): schema \(settings.schema) holds no Ferry data; copy into it first (ferry copy SOURCE URL)")
                }
            }
        } catch {
            await database.close()
            throw error
        }
        console.logger.info("connected to \(settings)")
        return PostgresRecordStore(database, layout: layout)
    }

    /// Creates Ferry's schema in `database` or brings it up to date, saying so on `console` (and why, when views or
    /// the tables' owner hold it at an earlier layout).
    /// - Returns: the layout it is at now.
    static func migrateSchema(_ database: PostgresDatabase, console: Console) async throws -> Int {
        let settings = database.settings
        var layout = PostgresSchema.version
        let before = try await PostgresSchema.migrate(
            database,
            migrating: { found in
                console.note(
                    "\(settings): bringing schema \(settings.schema) from Ferry's layout \(found) to \(PostgresSchema.version) (once; a large schema takes a while)"
                )
            },
            held: { reached, reason in
                layout = reached
                console.warning(reason)
            })
        if before < layout {
            console.logger.info("\(settings): schema \(settings.schema) brought from layout \(before) to \(layout)")
        }
        return layout
    }
}
