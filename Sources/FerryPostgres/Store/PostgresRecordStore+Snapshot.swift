import FerryBackend
import FerryRecords
import Logging
import PostgresNIO

extension PostgresRecordStore: SnapshotReading {
    /// A view of the database in one `REPEATABLE READ`, read-only transaction on a connection of its own.
    public func snapshot() async throws -> any RecordStore {
        let connection = try await database.dedicatedConnection()
        do {
            _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            // The snapshot is taken by the transaction's first statement.
            _ = try await connection.query("SELECT 1", logger: logger)
        } catch {
            try? await connection.close()
            throw database.translate(error)
        }
        return PostgresRecordStore(database, layout: layout, snapshot: SnapshotConnection(connection, database: database))
    }
}

/// The connection a snapshot's reads run on, one at a time.
actor SnapshotConnection {
    private let connection: PostgresConnection
    private let database: PostgresDatabase

    init(_ connection: PostgresConnection, database: PostgresDatabase) {
        self.connection = connection
        self.database = database
    }

    deinit {
        // A snapshot dropped without being closed: its connection is closed now, and kept until it is.
        let connection = self.connection
        if !connection.isClosed { connection.close().whenComplete { _ in _ = connection } }
    }

    /// The rows of a query in the snapshot.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        do {
            return try await connection.query(query, logger: database.logger).collect()
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            if PostgresDatabase.losesConnection(error) {
                // A snapshot cannot be taken again where it was: the read starts over.
                throw PostgresBackendError(
                    .interrupted,
                    "\(database.settings): the connection of the read's snapshot was lost (\(PostgresDatabase.describe(error))); run the same "
                        + "command again once the server is back", cause: error)
            }
            throw database.translate(error)
        }
    }

    /// Zones as the snapshot sees them, by name: their numbers and last change sequences (`nil`: no such zone).
    private(set) var zones: [ZoneID: (number: Int64, last: Int64)?] = [:]
    /// A page of the change feed asked for before it is wanted, by the query that reads it.
    private var ahead: (query: String, rows: Task<[PostgresRow], any Error>)?

    /// Remembers what the snapshot holds of a zone.
    func remember(_ zone: ZoneID, _ state: (number: Int64, last: Int64)?) { zones[zone] = state }

    /// The rows of a page of the change feed: the ones read ahead when they are the ones asked for, else read now.
    ///
    /// `key` says what the query reads (its text and binds).
    func page(_ query: PostgresQuery, key: String) async throws -> [PostgresRow] {
        if let ahead, ahead.query == key {
            self.ahead = nil
            return try await ahead.rows.value
        }
        return try await rows(query)
    }

    /// Starts reading a page of the change feed that will likely be asked for next, while the caller works on this one.
    func readAhead(_ query: PostgresQuery, key: String) {
        ahead?.rows.cancel()
        ahead = (key, Task { try await self.rows(query) })
    }

    func close() async {
        ahead = nil
        _ = try? await connection.query("COMMIT", logger: database.logger)
        try? await connection.close()
    }
}
