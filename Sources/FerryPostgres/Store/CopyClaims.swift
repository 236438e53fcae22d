import FerryRecords
import Logging
import PostgresNIO

/// What a store's copy holds against other copies, and the connection that holds it: the zones it writes, and the
/// index claim while it loads an empty store with its secondary indexes dropped.
actor CopyClaims {
    private let database: PostgresDatabase
    private var connection: PostgresConnection?
    private var held: Set<Int64> = []
    private var holdsIndexes = false

    init(_ database: PostgresDatabase) { self.database = database }

    deinit {
        // A store dropped without being closed: the connection is closed now (which releases the claims), and kept
        // until it is.
        if let connection, !connection.isClosed { connection.close().whenComplete { _ in _ = connection } }
    }

    private var key: String { database.settings.schema + ".copy" }

    func claim(_ number: Int64, zone: ZoneID, wait: Bool, waiting: @Sendable (String) -> Void) async throws {
        guard !held.contains(number) else { return }
        let connection = try await ownConnection(zone: zone)
        let logger = database.logger
        do {
            let binds = try PostgresRecordStore.binds(key, Int32(truncatingIfNeeded: number))
            var taken = false
            for try await row in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT pg_try_advisory_lock(hashtext($1), $2)", binds: binds), logger: logger)
            {
                taken = try row.decode(Bool.self)
            }
            if !taken {
                let holder = try await holder(of: number, on: connection)
                guard wait else {
                    throw PostgresBackendError(
                        .busy,
                        "\(database.settings): another copy is writing zone \(zone) (\(holder)); run this one again once it has finished, "
                            + "or without --no-wait to wait for it")
                }
                waiting("\(database.settings): another copy is writing zone \(zone) (\(holder)); waiting for it to finish")
                _ = try await connection.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(hashtext($1), $2)", binds: binds), logger: logger)
            }
        } catch let error as PostgresBackendError {
            throw error
        } catch {
            throw database.translate(error)
        }
        held.insert(number)
    }

    /// Whether this store's copy holds the index claim (taken now if no other copy holds it).
    ///
    /// The copy that drops the secondary indexes for a first load holds it until it has built them again; a copy
    /// that finds them missing builds them only when it can take the claim (else their dropper is still loading).
    func claimIndexes() async throws -> Bool {
        if holdsIndexes { return true }
        let connection = try await ownConnection(zone: .default)
        do {
            var taken = false
            let query = PostgresQuery(unsafeSQL: "SELECT pg_try_advisory_lock(hashtext($1))", binds: try PostgresRecordStore.binds(indexKey))
            for try await row in try await connection.query(query, logger: database.logger) { taken = try row.decode(Bool.self) }
            holdsIndexes = taken
            return taken
        } catch {
            throw database.translate(error)
        }
    }

    /// Lets go of the index claim.
    func releaseIndexes() async throws {
        guard holdsIndexes, let connection, !connection.isClosed else {
            holdsIndexes = false
            return
        }
        do {
            let query = PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(hashtext($1))", binds: try PostgresRecordStore.binds(indexKey))
            _ = try await connection.query(query, logger: database.logger)
        } catch {
            throw database.translate(error)
        }
        holdsIndexes = false
    }

    private var indexKey: String { database.settings.schema + ".indexes" }

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
    private func ownConnection(zone: ZoneID) async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        let made = try await database.dedicatedConnection()
        for number in held.sorted() {
            var taken = false
            let query = PostgresQuery(
                unsafeSQL: "SELECT pg_try_advisory_lock(hashtext($1), $2)",
                binds: try PostgresRecordStore.binds(key, Int32(truncatingIfNeeded: number)))
            for try await row in try await made.query(query, logger: database.logger) { taken = try row.decode(Bool.self) }
            guard taken else {
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

    /// Releases every claim.
    func release() async {
        try? await connection?.close()
        connection = nil
        held = []
        holdsIndexes = false
    }
}
