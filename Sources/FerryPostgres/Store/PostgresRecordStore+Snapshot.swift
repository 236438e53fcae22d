import FerryBackend
import FerryCore
import FerryRecords
import Logging
import PostgresNIO

extension PostgresRecordStore: SnapshotReading {
    /// A view of the database in one `REPEATABLE READ`, read-only transaction on a connection of its own, shared
    /// with a second connection for the reads that are not the change feed's pages.
    public func snapshot() async throws -> any RecordStore {
        let connection = try await database.dedicatedConnection()
        let exported: String?
        do {
            exported = try await Self.beginExported(on: connection, logger: logger)
        } catch {
            try? await connection.close()
            throw database.translate(error)
        }
        var side: PostgresConnection?
        if let exported { side = await sharingConnection(exported) }
        return PostgresRecordStore(database, layout: layout, snapshot: SnapshotConnection(connection, side: side, database: database))
    }

    /// The statement that begins a snapshot's transaction, on either of its connections.
    private static let beginSnapshot: PostgresQuery = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    /// A second connection in the exported snapshot `name`; `nil` (said in the debug log) where none can be opened or
    /// the server does not let it share the snapshot.
    private func sharingConnection(_ name: String) async -> PostgresConnection? {
        let other: PostgresConnection
        do {
            other = try await database.dedicatedConnection()
        } catch {
            logger.debug("the snapshot is read on one connection: a second could not be opened (\(PostgresDatabase.describe(error)))")
            return nil
        }
        do {
            _ = try await other.query(Self.beginSnapshot, logger: logger)
            _ = try await other.query(PostgresQuery(unsafeSQL: "SET TRANSACTION SNAPSHOT '\(name)'"), logger: logger)
            return other
        } catch {
            logger.debug("the snapshot is read on one connection: a second could not share it (\(PostgresDatabase.describe(error)))")
            try? await other.close()
            return nil
        }
    }

    /// Begins the snapshot's transaction on `connection` and exports its snapshot for a second connection: the
    /// snapshot's name, or `nil` (the transaction begun again, unshared) where the server does not export one.
    private static func beginExported(on connection: PostgresConnection, logger: Logger) async throws -> String? {
        _ = try await connection.query(beginSnapshot, logger: logger)
        do {
            // The snapshot is taken by the transaction's first statement, this one.
            var name: String?
            for try await row in try await connection.query("SELECT pg_export_snapshot()", logger: logger) {
                name = try row.decode(String.self)
            }
            // A name such as 00000003-0000001B-1, written into a statement: nothing else is taken.
            if let name, !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") }) {
                return name
            }
            return nil
        } catch let error as PSQLError where error.code == .server {
            logger.debug("the snapshot is read on one connection: the server exports none (\(PostgresDatabase.describe(error)))")
            _ = try await connection.query("ROLLBACK", logger: logger)
            _ = try await connection.query(beginSnapshot, logger: logger)
            _ = try await connection.query("SELECT 1", logger: logger)
            return nil
        }
    }
}

/// The connections a snapshot's reads run on: the change feed's pages on one, the other reads (assets, zones) on a
/// second in the same snapshot where there is one, so that they do not wait behind a page.
actor SnapshotConnection {
    private let connection: PostgresConnection
    private let side: PostgresConnection?
    private let database: PostgresDatabase

    init(_ connection: PostgresConnection, side: PostgresConnection?, database: PostgresDatabase) {
        self.connection = connection
        self.side = side
        self.database = database
    }

    /// Both connections (the feed's first).
    private nonisolated var connections: [PostgresConnection] { [connection] + (side.map { [$0] } ?? []) }

    deinit {
        // A snapshot dropped without being closed: its connections are closed now, and kept until they are.
        for connection in connections where !connection.isClosed {
            connection.close().whenComplete { _ in _ = connection }
        }
    }

    /// The rows of a query in the snapshot, read on the second connection where there is one.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await read(query, on: side ?? connection, into: []) { rows, row in rows.append(row) }
    }

    /// Reads a query's rows in the snapshot into `initial` with `take`, each as it arrives: a row taken apart is
    /// released at once (a row keeps alive the receive buffer it was cut from, so rows held for a whole page held many).
    private func read<Result: Sendable>(
        _ query: PostgresQuery, on connection: PostgresConnection, into initial: Result,
        _ take: @escaping @Sendable (inout Result, PostgresRow) throws -> Void
    ) async throws -> Result {
        do {
            // Rows are taken on the connection's event loop as they are decoded: through the async sequence of rows,
            // each row cost a suspension and a hop between threads, as much as taking it apart.
            let result = RowsTaken(initial)
            _ = try await connection.query(query, logger: database.logger) { row in try take(&result.value, row) }.get()
            return result.value
        } catch let error as any FerryError {
            // The server's, translated already, or what taking a row found wrong with it.
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
    /// A page of the change feed read before it is wanted, by what was read (the query's text and binds, and into
    /// what).
    private var ahead: (key: String, read: Task<any Sendable, any Error>)?

    /// Remembers what the snapshot holds of a zone.
    func remember(_ zone: ZoneID, _ state: (number: Int64, last: Int64)?) { zones[zone] = state }

    /// A page of the change feed read as ``read(_:into:_:)`` reads it: the one read ahead when it is the one asked
    /// for, else read now.
    ///
    /// `key` says what is read (the query's text and binds, and into what).
    func page<Result: Sendable>(
        _ query: PostgresQuery, key: String, into initial: Result, _ take: @escaping @Sendable (inout Result, PostgresRow) throws -> Void
    ) async throws -> Result {
        if let ahead, ahead.key == key {
            self.ahead = nil
            if let result = try await ahead.read.value as? Result { return result }
        }
        return try await read(query, on: connection, into: initial, take)
    }

    /// Starts reading a page of the change feed that will likely be asked for next, while the caller works on this one.
    func readAhead<Result: Sendable>(
        _ query: PostgresQuery, key: String, into initial: Result, _ take: @escaping @Sendable (inout Result, PostgresRow) throws -> Void
    ) {
        ahead?.read.cancel()
        ahead = (key, Task { try await self.read(query, on: self.connection, into: initial, take) })
    }

    func close() async {
        ahead = nil
        for connection in connections {
            _ = try? await connection.query("COMMIT", logger: database.logger)
            try? await connection.close()
        }
    }
}

/// What a query's rows are taken into on the connection's event loop, the only thread that touches it until the query
/// has ended.
private final class RowsTaken<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
