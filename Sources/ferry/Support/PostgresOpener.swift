import FerryCore
import FerryPostgres
import Logging

/// Opens a PostgreSQL database named by a URL: settings as libpq reads them, a checked connection, Ferry's schema
/// created or brought up to date.
enum PostgresOpener {
    static func open(_ url: String, console: Console, migrate: Bool = true) async throws -> PostgresRecordStore {
        let settings = try PostgresSettings(url: url)
        for warning in settings.warnings { console.warning(warning) }
        var logger = Logger(label: "ferry.postgres")
        // The pool's own logging: what it reports is Ferry's to explain, so only its errors pass.
        logger.logLevel = console.verbose ? .warning : .error
        let database = try await PostgresDatabase.open(settings, logger: logger)
        do {
            if !migrate, try await PostgresSchema.currentVersion(database) == 0 {
                throw PostgresBackendError(
                    .noData, "\(settings): schema \(settings.schema) holds no Ferry data; copy into it first (ferry copy SOURCE URL)")
            }
            if migrate {
                let before = try await PostgresSchema.migrate(database)
                if before < PostgresSchema.version {
                    console.logger.info("\(settings): schema \(settings.schema) brought from layout \(before) to \(PostgresSchema.version)")
                }
            }
        } catch {
            await database.close()
            throw error
        }
        console.logger.info("connected to \(settings)")
        return PostgresRecordStore(database)
    }
}
