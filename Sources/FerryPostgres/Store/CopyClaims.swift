import FerryRecords
import Logging
import PostgresNIO

/// What a store's copy holds against other copies, and the connection that holds it: the zones it writes (and whose
/// partitions of their own it may load without their indexes, see ``PostgresRecordStore/endBulkLoad()``).
actor CopyClaims {
    private let database: PostgresDatabase
    private var connection: PostgresConnection?
    private var held: Set<Int64> = []

    init(_ database: PostgresDatabase) { self.database = database }

    deinit {
        // A store dropped without being closed: the connection is closed now (which releases the claims), and kept
        // until it is.
        if let connection, !connection.isClosed { connection.close().whenComplete { _ in _ = connection } }
    }

    private var key: String { database.settings.schema + ".copy" }

    func claim(_ number: Int64, zone: ZoneID, wait: Bool, waiting: @Sendable (String) -> Void) async throws {
        guard !held.contains(number) else { return }
        let connection = try await ownConnection()
        let logger = database.logger
        do {
            if try await !tryLock(zone: number, on: connection) {
                let holder = try await holder(of: number, on: connection)
                guard wait else {
                    throw PostgresBackendError(
                        .busy,
                        "\(database.settings): another copy is writing zone \(zone) (\(holder)); run this one again once it has finished, "
                            + "or without --no-wait to wait for it")
                }
                waiting("\(database.settings): another copy is writing zone \(zone) (\(holder)); waiting for it to finish")
                let binds = try PostgresRecordStore.binds(key, Int32(truncatingIfNeeded: number))
                _ = try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(hashtext($1), $2)", binds: binds), logger: logger)
            }
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw database.translate(error)
        }
        held.insert(number)
    }

    /// Whether this store's copy holds the claim of the zone numbered `number`, its connection made again (and its
    /// claims taken again) when it was lost.
    /// - Throws: ``PostgresBackendError`` `interrupted` when another copy took one of them meanwhile.
    func holds(_ number: Int64) async throws -> Bool {
        guard held.contains(number) else { return false }
        _ = try await ownConnection()
        return true
    }

    /// Takes the claim of the zone numbered `number` if no other copy holds it (or this one does already).
    ///
    /// - Returns: whether this copy holds it now; one taken here is let go by ``release(_:)``.
    func tryClaim(_ number: Int64) async throws -> Bool {
        if held.contains(number) { return true }
        let connection = try await ownConnection()
        do {
            guard try await tryLock(zone: number, on: connection) else { return false }
        } catch {
            throw database.translate(error)
        }
        held.insert(number)
        return true
    }

    /// Lets go of the claim of the zone numbered `number`.
    func release(_ number: Int64) async throws {
        guard held.remove(number) != nil, let connection, !connection.isClosed else { return }
        do {
            let query = PostgresQuery(
                unsafeSQL: "SELECT pg_advisory_unlock(hashtext($1), $2)", binds: try PostgresRecordStore.binds(key, Int32(truncatingIfNeeded: number))
            )
            _ = try await connection.query(query, logger: database.logger)
        } catch {
            throw database.translate(error)
        }
    }

    /// Who holds a zone's claim, as the server sees them.
    private func holder(of number: Int64, on connection: PostgresConnection) async throws -> String {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT a.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), 'a local socket') FROM pg_locks l
                    JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.objid = ($2::bigint)::oid
                      AND l.classid = (hashtext($1)::bigint & 4294967295)::oid
                    """, binds: try PostgresRecordStore.binds(key, Int64(Int32(truncatingIfNeeded: number)) & 0xFFFF_FFFF)), logger: database.logger)
        for try await (pid, application, client) in rows.decode((Int32, String, String).self) {
            return "server process \(pid)\(application.isEmpty ? "" : ", \(application)"), connected from \(client)"
        }
        return "it has just finished"
    }

    /// The connection holding the claims; when it was lost (and the claims with it), a new one that takes them again.
    private func ownConnection() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        let made = try await database.dedicatedConnection()
        for number in held.sorted() {
            guard try await tryLock(zone: number, on: made) else {
                try? await made.close()
                throw PostgresBackendError(
                    .interrupted,
                    "\(database.settings): the connection holding this copy's zones was lost, and another copy took one of them meanwhile; "
                        + "run the same command again once that copy has finished (it resumes)")
            }
        }
        connection = made
        return made
    }

    /// Takes a zone's claim on `connection` if no other copy holds it; whether it did.
    private func tryLock(zone number: Int64, on connection: PostgresConnection) async throws -> Bool {
        try await answer(
            PostgresQuery(
                unsafeSQL: "SELECT pg_try_advisory_lock(hashtext($1), $2)",
                binds: try PostgresRecordStore.binds(key, Int32(truncatingIfNeeded: number))),
            on: connection)
    }

    /// The one `boolean` a query answers (`false` when it gives no row).
    private func answer(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> Bool {
        var answer = false
        for try await row in try await connection.query(query, logger: database.logger) { answer = try row.decode(Bool.self) }
        return answer
    }

    /// Releases every claim.
    func release() async {
        try? await connection?.close()
        connection = nil
        held = []
    }
}
