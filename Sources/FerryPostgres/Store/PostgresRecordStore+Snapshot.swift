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
        return PostgresRecordStore(database, snapshot: SnapshotConnection(connection, database: database))
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

    func close() async {
        _ = try? await connection.query("COMMIT", logger: database.logger)
        try? await connection.close()
    }
}
