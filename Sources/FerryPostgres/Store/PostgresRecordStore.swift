import FerryBackend
import FerryCore
import FerryJSON
import FerryRecords
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// PostgreSQL as a ``RecordStore``: Ferry's schema in a database, with CloudKit's semantics, and the journal of
/// copies into it.
///
/// Each modify request is one transaction. A write takes its zone's row for its next change sequence, so two writers
/// of one zone take turns and the change feed has no gaps; writers of different zones do not wait for each other.
/// Records are kept in their canonical CloudKit form as `jsonb` (readable with SQL), with the content digest the other
/// backends compute; DELETE_SELF references are kept in `refs` for cascades; deletions leave tombstones in the feed;
/// assets are stored once, in 1 MiB chunks.
public final class PostgresRecordStore: RecordStore, CheckpointJournal {
    /// The database.
    public let database: PostgresDatabase
    /// The time of a write in milliseconds, when it is not the server's (tests give one that ticks).
    let clock: (@Sendable () -> Int64)?
    /// What this store's copy holds against other copies (the zones it writes).
    let claims: CopyClaims
    /// The snapshot this store reads from, when it is one (``snapshot()``).
    let snapshot: SnapshotConnection?
    /// The zones this store has written in bulk (``createAbsent(_:)``), by number: how many records each (which ones
    /// ``endBulkLoad()`` vacuums and analyzes), and where their rows go.
    let bulkLoads = Mutex<[Int64: ZoneLoad]>([:])
    /// Where each zone's comparison of digests has got to in the zone's feed (``differing(_:digests:)``).
    let digestCursors = Mutex<[ZoneID: DigestCursor]>([:])
    /// The layout of the schema as this store found it.
    public let layout: Int
    /// The expression of a row's fields object (of the table named `alias`): layouts before 3 kept the whole record
    /// dictionary in `fields`.
    func fieldsColumn(of alias: String? = nil) -> String {
        let column = alias.map { "\($0).fields" } ?? "fields"
        return layout >= 3 ? column : "(\(column)->'fields')"
    }
    /// The zone numbers this store has seen, which a bulk write locks and checks in one step (``createAbsent(_:)``).
    let zoneNumbers = Mutex<[ZoneID: Int64]>([:])
    var schema: String { database.settings.schema }
    var logger: Logger { database.logger }

    /// The store over `database`, whose schema must be migrated (``PostgresSchema/migrate(_:)``).
    ///
    /// A schema of an earlier layout (`layout`, from ``PostgresSchema/currentVersion(_:)``) is read as it is and not
    /// written: migrating it is a write, which a source must not see. Records are stamped with the time their write's
    /// transaction began, by the server's clock, to the millisecond; `clock` replaces it (tests make time tick).
    public init(_ database: PostgresDatabase, layout: Int = PostgresSchema.version, clock: (@Sendable () -> Int64)? = nil) {
        self.database = database
        self.clock = clock
        self.layout = layout
        claims = CopyClaims(database)
        snapshot = nil
    }

    /// A store that reads from `snapshot`.
    init(_ database: PostgresDatabase, layout: Int, snapshot: SnapshotConnection) {
        self.database = database
        clock = nil
        self.layout = layout
        claims = CopyClaims(database)
        self.snapshot = snapshot
    }

    /// The rows of a read, on the snapshot when this store is one, else on the pool.
    func read(_ query: PostgresQuery) async throws -> [PostgresRow] {
        if let snapshot { return try await snapshot.rows(query) }
        return try await database.rows(query)
    }

    /// Refuses a write to a snapshot.
    func writable() throws {
        guard snapshot == nil else { throw PostgresBackendError(.server, "\(name): a snapshot is read-only; write to the database itself") }
        try requireCurrentLayout()
    }

    /// Refuses a schema of a layout before ``PostgresSchema/writtenFrom``, which this store reads as it is but does not
    /// write (nor base anything written elsewhere on, such as views).
    /// - Throws: ``PostgresBackendError`` `older-schema` (78), saying how to migrate it.
    public func requireCurrentLayout() throws {
        guard layout >= PostgresSchema.writtenFrom else {
            throw PostgresBackendError(
                .olderSchema,
                "\(name): schema \(schema) has Ferry's layout \(layout), which this Ferry reads but does not write; migrate it first (any ferry copy into it does)"
            )
        }
    }

    public var name: String { database.settings.description }

    public var capabilities: BackendCapabilities {
        BackendCapabilities(
            atomicZones: true, changeFeed: true, reportsTombstones: true, maxOperationsPerRequest: 1000, maxRequestBytes: 16 << 20,
            concurrentRequests: 4)
    }

    private func sql(_ text: String) -> PostgresQuery { PostgresQuery(unsafeSQL: text) }

    // MARK: Zones

    public func zones() async throws -> [ZoneSummary] {
        try await zoneRows(counting: true).map { ZoneSummary(zoneID: $0.zone, syncToken: $0.token, recordCount: $0.count) }
    }

    public func zoneTokens() async throws -> [ZoneToken] {
        try await zoneRows(counting: false).map { ZoneToken(zoneID: $0.zone, syncToken: $0.token) }
    }

    /// Every zone in ``zones()``'s order with its token and, when `counting`, its live records (0 otherwise: a count
    /// reads the zone's whole feed index, a fifth of a second for the standard store).
    private func zoneRows(counting: Bool) async throws -> [(zone: ZoneID, token: SyncToken, count: Int)] {
        let count = counting ? "(SELECT count(*) FROM \(schema).records r WHERE r.zone = z.id AND NOT r.deleted)" : "0::int8"
        var zones: [(zone: ZoneID, token: SyncToken, count: Int)] = []
        for row in try await read(
            sql(
                """
                SELECT z.id, z.zone_name, z.owner_name, z.last_seq, \(count)
                FROM \(schema).zones z
                ORDER BY (z.zone_name = '_defaultZone' AND z.owner_name = '__defaultOwner__') DESC, z.zone_name, z.owner_name
                """)
        ) {
            let (id, zoneName, owner, last, count) = try row.decode((Int64, String, String, Int64, Int64).self)
            zones.append((ZoneID(zoneName: zoneName, ownerName: owner), Self.token(id, last), Int(count)))
        }
        return zones
    }

    /// Every zone, each with whether it holds a live record; one index probe per zone where ``zones()`` counts.
    ///
    /// The probe is a first row in key order rather than `EXISTS`: the planner drops an `EXISTS`'s order and, expecting
    /// a zone's many rows anywhere in the table, scans it from the start, through every row of the zones before.
    public func zoneOccupancy() async throws -> [ZoneID: Bool] {
        var zones: [ZoneID: Bool] = [:]
        for row in try await read(
            sql(
                """
                SELECT z.zone_name, z.owner_name,
                       (SELECT true FROM \(schema).records r WHERE r.zone = z.id AND NOT r.deleted ORDER BY r.zone, r.name LIMIT 1) IS NOT NULL
                FROM \(schema).zones z
                """)
        ) {
            let (zoneName, ownerName, occupied) = try row.decode((String, String, Bool).self)
            zones[ZoneID(zoneName: zoneName, ownerName: ownerName)] = occupied
        }
        return zones
    }

    public func createZone(_ zone: ZoneID) async throws -> Bool {
        try writable()
        var created = false
        try await database.query(
            PostgresQuery(
                unsafeSQL: "INSERT INTO \(schema).zones(zone_name, owner_name) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING id",
                binds: try Self.binds(zone.zoneName, zone.ownerName))
        ) { _ in created = true }
        return created
    }

    public func deleteZone(_ zone: ZoneID) async throws -> Bool {
        try writable()
        guard zone != .default else { return false }
        let deleted: Int64? = try await database.transaction { [self] connection in
            guard let (number, _) = try await lockedZone(zone, on: connection) else { return nil }
            for table in ["refs", "records"] {
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DELETE FROM \(schema).\(table) WHERE zone = $1", binds: try Self.binds(number)), logger: logger)
            }
            try await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM \(schema).zones WHERE id = $1", binds: try Self.binds(number)), logger: logger)
            return number
        }
        guard let number = deleted else { return false }
        try await dropPartitions(of: number)
        return true
    }

    /// Drops the (emptied) partitions of its own a deleted zone had, if any, when no one is reading the tables.
    ///
    /// Dropping a partition waits for every reader of its parent table, and holds up every query after it while it
    /// waits: it waits a moment at most, and an empty partition left behind is harmless (zone numbers are not reused).
    private func dropPartitions(of number: Int64) async throws {
        let partitions = ["records", "refs"].map { "\(schema).\(PostgresSchema.partitionName($0, zone: number))" }
        do {
            try await database.transaction { [self] connection in
                try await connection.query("SET LOCAL lock_timeout = '200ms'", logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(partitions.joined(separator: ", "))"), logger: logger)
            }
        } catch let error as PostgresBackendError where error.sqlState == "55P03" || error.code == .permission {
            logger.debug("\(name): the empty partitions of deleted zone \(number) are left: \(error.message)")
        }
    }

    /// The zone's number, with its turn taken for the rest of the transaction, and the time the transaction's writes
    /// are stamped with (``takeTurn(zone:on:)``); `nil` when there is no such zone.
    ///
    /// Requests into one zone (and its deletion) take turns on an advisory lock, before any record is locked: two
    /// writers of the same records could otherwise each hold a record the other waits for.
    func lockedZone(_ zone: ZoneID, on connection: PostgresConnection) async throws -> (number: Int64, now: Int64)? {
        guard let number = try await zoneNumber(zone, on: connection) else { return nil }
        let now = try await takeTurn(zone: number, on: connection)
        // Deleted, or deleted and made again, while this request waited for its turn.
        return try await zoneNumber(zone, on: connection) == number ? (number, now) : nil
    }

    /// Takes the turn of the zone numbered `number` for the rest of the transaction (``lockedZone(_:on:)``).
    /// - Returns: the time the transaction's writes are stamped with (``writeTime(server:)``).
    func takeTurn(zone number: Int64, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(Self.serverTime) FROM pg_advisory_xact_lock(hashtext($1), $2)",
                binds: try Self.binds(schema, Int32(truncatingIfNeeded: number))),
            logger: logger)
        var now: Int64 = 0
        for try await row in rows { now = try row.decode(Int64.self) }
        return writeTime(server: now)
    }

    /// The time a write is stamped with: the store's clock when it has one, else the server's (``serverTime``).
    func writeTime(server: Int64) -> Int64 { clock?() ?? server }

    /// The expression of the time a transaction began by the server's clock, in whole milliseconds since 1970: what
    /// `records.created` and `records.modified` default to (layout 4), so a bulk write's COPY leaves them out.
    package static let serverTime = "(extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint"

    /// The query of a zone's number (its row in `zones`).
    func zoneNumberQuery(_ zone: ZoneID) throws -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: "SELECT id FROM \(schema).zones WHERE zone_name = $1 AND owner_name = $2", binds: try Self.binds(zone.zoneName, zone.ownerName)
        )
    }

    /// The zone's number (its row in `zones`, looked up now), remembered; `nil` when there is no such zone.
    func zoneNumber(_ zone: ZoneID) async throws -> Int64? {
        let number = try await database.rows(try zoneNumberQuery(zone)).first.map { try $0.decode(Int64.self) }
        zoneNumbers.withLock { $0[zone] = number }
        return number
    }

    /// The zone's number as this store last saw it, else looked up.
    func knownZoneNumber(_ zone: ZoneID) async throws -> Int64? {
        if let known = zoneNumbers.withLock({ $0[zone] }) { return known }
        return try await zoneNumber(zone)
    }

    func zoneNumber(_ zone: ZoneID, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(try zoneNumberQuery(zone), logger: logger)
        var number: Int64?
        for try await row in rows { number = try row.decode(Int64.self) }
        zoneNumbers.withLock { $0[zone] = number }
        return number
    }

    // MARK: Records

    public func lookup(_ ids: [RecordID]) async throws -> [RecordID: RecordVersion] {
        var found: [RecordID: RecordVersion] = [:]
        for (zone, names) in ids.groupedInRuns(by: \.zoneID) {
            for row in try await read(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT r.name, r.type, r.tag, r.deleted, r.digest FROM \(Self.byName(schema, columns: "name, type, tag, deleted, digest"))
                        """, binds: try Self.binds(zone.zoneName, zone.ownerName, names.map(\.recordName)))
            ) {
                let (name, type, tag, deleted, digest) = try row.decode((String, String, String, Bool, Data?).self)
                found[RecordID(recordName: name, zoneID: zone)] = RecordVersion(
                    recordType: type, changeTag: tag, isDeleted: deleted, contentDigest: digest.flatMap { SHA256Digest(bytes: Array($0)) })
            }
        }
        return found
    }

    public func fetch(_ ids: [RecordID]) async throws -> [RecordID: Record] {
        var found: [RecordID: Record] = [:]
        for (zone, names) in ids.groupedInRuns(by: \.zoneID) {
            for row in try await read(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT r.name, r.type, r.tag, r.created, r.modified, \(fieldsColumn(of: "r"))::text
                        FROM \(Self.byName(schema, columns: "name, type, tag, created, modified, fields, deleted")) WHERE NOT r.deleted
                        """, binds: try Self.binds(zone.zoneName, zone.ownerName, names.map(\.recordName)))
            ) {
                let (name, type, tag, created, modified, fields) = try row.decode((String, String, String, Date, Date, ByteBuffer?).self)
                found[RecordID(recordName: name, zoneID: zone)] = try Self.record(
                    fields: fields, name: name, type: type, zone: zone,
                    system: Self.system(tag: tag, created: Self.milliseconds(created), modified: Self.milliseconds(modified)),
                    store: self.name)
            }
        }
        return found
    }

    public func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool) async throws -> [RecordOutcome] {
        try writable()
        if atomic && zone == .default {
            return operations.map { .failed($0.record.id, .badRequest, reason: "atomic operations are not supported in the default zone (\(zone))") }
        }
        do {
            return try await modify(operations, in: zone, atomic: atomic, eachAlone: false)
        } catch let error as PostgresBackendError where error.refusesData {
            // The server refused a record: the request again, each operation in a savepoint of its own, so that the one
            // refused fails with the server's message and the others are written.
            return try await modify(operations, in: zone, atomic: atomic, eachAlone: true)
        }
    }

    /// One modify request in one transaction; with `eachAlone`, an operation the server refuses fails by itself.
    private func modify(_ operations: [RecordOperation], in zone: ZoneID, atomic: Bool, eachAlone: Bool) async throws -> [RecordOutcome] {
        try await database.transaction { [self] connection in
            let locked = try await lockedZone(zone, on: connection)
            let (number, now) = (locked?.number, locked?.now ?? 0)
            if atomic { try await connection.query("SAVEPOINT atomic_batch", logger: logger) }
            var seen: Set<String> = []
            var outcomes: [RecordOutcome] = []
            for operation in operations {
                if let problem = operation.requestProblem(zone: zone, zoneExists: number != nil, seen: &seen) {
                    outcomes.append(problem)
                } else if let number, eachAlone {
                    try await connection.query("SAVEPOINT operation", logger: logger)
                    do {
                        outcomes.append(try await apply(operation, zone: number, on: connection, now: now))
                        try await connection.query("RELEASE SAVEPOINT operation", logger: logger)
                    } catch let error as PSQLError where PostgresBackendError.refusesData(error) {
                        try await connection.query("ROLLBACK TO SAVEPOINT operation", logger: logger)
                        outcomes.append(
                            .failed(
                                operation.record.id, .badRequest,
                                reason: "PostgreSQL refused the record: \(PostgresBackendError.serverMessage(error))"))
                    }
                } else if let number {
                    outcomes.append(try await apply(operation, zone: number, on: connection, now: now))
                }
            }
            guard atomic, outcomes.contains(where: { $0.errorCode != nil }) else { return outcomes }
            try await connection.query("ROLLBACK TO SAVEPOINT atomic_batch", logger: logger)
            return RecordOperation.atomicFailure(outcomes)
        }
    }

    /// A live record's state, locked for this transaction.
    private struct Live {
        var type: String
        var tag: String
        var created: Date
    }

    private func live(_ name: String, zone: Int64, on connection: PostgresConnection) async throws -> Live? {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT type, tag, created FROM \(schema).records WHERE zone = $1 AND name = $2 AND NOT deleted FOR UPDATE",
                binds: try Self.binds(zone, name)), logger: logger)
        for try await row in rows {
            let (type, tag, created) = try row.decode((String, String, Date).self)
            return Live(type: type, tag: tag, created: created)
        }
        return nil
    }

    private func apply(_ operation: RecordOperation, zone: Int64, on connection: PostgresConnection, now: Int64) async throws -> RecordOutcome {
        let record = operation.record
        let id = record.id
        guard !record.recordName.isEmpty else { return .failed(id, .badRequest, reason: "the record has no name") }
        let current = try await live(record.recordName, zone: zone, on: connection)
        func merged() async throws -> Record {
            guard current != nil else { return record }
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT type, \(fieldsColumn())::text FROM \(schema).records WHERE zone = $1 AND name = $2",
                    binds: try Self.binds(zone, record.recordName)),
                logger: logger)
            var base = record
            for try await row in rows {
                let (type, fields) = try row.decode((String, ByteBuffer?).self)
                base = try Self.record(fields: fields, name: record.recordName, type: type, zone: record.zoneID, system: nil, store: name)
            }
            for field in record.fields { base.fields[field.name] = field.value }
            base.recordType = record.recordType
            return base
        }
        switch operation.kind {
        case .create:
            if current != nil { return .failed(id, .exists, reason: "record \(record.recordName) already exists in \(record.zoneID)") }
            return try await save(record, zone: zone, created: nil, on: connection, now: now)
        case .update:
            if let problem = operation.changeTagProblem(liveTag: current?.tag) { return problem }
            return try await save(try await merged(), zone: zone, created: current?.created, on: connection, now: now)
        case .forceUpdate:
            return try await save(try await merged(), zone: zone, created: current?.created, on: connection, now: now)
        case .replace:
            if let problem = operation.changeTagProblem(liveTag: current?.tag) { return problem }
            return try await save(record, zone: zone, created: current?.created, on: connection, now: now)
        case .forceReplace:
            return try await save(record, zone: zone, created: current?.created, on: connection, now: now)
        case .delete:
            if let problem = operation.changeTagProblem(liveTag: current?.tag) { return problem }
            try await delete(record.recordName, zone: zone, on: connection, now: now)
            return .deleted(id)
        case .forceDelete:
            guard current != nil else { return .failed(id, .notFound, reason: "no record \(record.recordName) in \(record.zoneID)") }
            try await delete(record.recordName, zone: zone, on: connection, now: now)
            return .deleted(id)
        }
    }

    /// The zone's next change sequence; its row stays locked until the transaction ends.
    func nextSequence(_ zone: Int64, on connection: PostgresConnection) async throws -> Int64 {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "UPDATE \(schema).zones SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq", binds: try Self.binds(zone)),
            logger: logger)
        for try await row in rows { return try row.decode(Int64.self) }
        throw PostgresBackendError(.server, "\(name): zone \(zone) vanished during a write")
    }

    private func save(_ record: Record, zone: Int64, created: Date?, on connection: PostgresConnection, now: Int64) async throws -> RecordOutcome {
        var deleteSelf: [String] = []
        for field in record.fields {
            for reference in field.value.references {
                if reference.zoneID != record.zoneID {
                    return .failed(
                        record.id, .badRequest, reason: "\(field.name) points into zone \(reference.zoneID); a reference cannot cross zones")
                }
                if reference.action == .validate, try await live(reference.recordName, zone: zone, on: connection) == nil {
                    return .failed(
                        record.id, .validatingReferenceError,
                        reason: "\(field.name) must point at an existing record; \(reference.recordName) is not there")
                }
                if reference.action == .deleteSelf { deleteSelf.append(reference.recordName) }
            }
        }
        var bare = record
        bare.system = nil
        let content = RecordContent(bare)
        guard !content.body.containsEscapedNUL else {
            return .failed(record.id, .badRequest, reason: "a string holds \\u0000, which PostgreSQL's jsonb cannot store")
        }
        let sequence = try await nextSequence(zone, on: connection)
        let tag = String(sequence, radix: 36)
        let modified = Date(timeIntervalSince1970: Double(now) / 1000)
        let createdAt = created ?? modified
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(schema).records(zone, name, type, tag, seq, created, modified, deleted, digest, fields)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, false, $8, $9::jsonb)
                    ON CONFLICT (zone, name) DO UPDATE SET type = excluded.type, tag = excluded.tag, seq = excluded.seq,
                        created = excluded.created, modified = excluded.modified, deleted = false, digest = excluded.digest,
                        fields = excluded.fields
                    """,
                binds: try Self.binds(
                    zone, record.recordName, record.recordType, tag, sequence, createdAt, modified, Data(content.digest.bytes),
                    String(decoding: content.fieldsJSON, as: UTF8.self))), logger: logger)
        try await connection.query(
            PostgresQuery(unsafeSQL: "DELETE FROM \(schema).refs WHERE zone = $1 AND source = $2", binds: try Self.binds(zone, record.recordName)),
            logger: logger)
        for target in Set(deleteSelf) {
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(schema).refs(zone, source, target, action) VALUES ($1, $2, $3, 'DELETE_SELF')",
                    binds: try Self.binds(zone, record.recordName, target)), logger: logger)
        }
        bare.system = SystemFields(
            changeTag: tag, created: RecordStamp(timestamp: Self.milliseconds(createdAt)), modified: RecordStamp(timestamp: now))
        return .saved(bare)
    }

    /// Leaves a tombstone, then deletes, transitively, the live records of the zone that point here with DELETE_SELF.
    private func delete(_ name: String, zone: Int64, on connection: PostgresConnection, now: Int64) async throws {
        var pending = [name]
        var visited: Set<String> = []
        let modified = Date(timeIntervalSince1970: Double(now) / 1000)
        while let current = pending.popLast() {
            guard visited.insert(current).inserted, try await live(current, zone: zone, on: connection) != nil else { continue }
            let sequence = try await nextSequence(zone, on: connection)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        UPDATE \(schema).records SET deleted = true, tag = $3, seq = $4, modified = $5, digest = NULL, fields = NULL
                        WHERE zone = $1 AND name = $2
                        """, binds: try Self.binds(zone, current, String(sequence, radix: 36), sequence, modified)), logger: logger)
            try await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM \(schema).refs WHERE zone = $1 AND source = $2", binds: try Self.binds(zone, current)),
                logger: logger)
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT f.source FROM \(schema).refs f JOIN \(schema).records r ON r.zone = f.zone AND r.name = f.source
                        WHERE f.zone = $1 AND f.target = $2 AND NOT r.deleted
                        """, binds: try Self.binds(zone, current)), logger: logger)
            for try await row in rows { pending.append(try row.decode(String.self)) }
        }
    }

    // MARK: Assets

    public func missingAssets(_ assets: [Asset]) async throws -> [Asset] {
        guard !assets.isEmpty else { return [] }
        var held: [Data: Int64] = [:]
        for row in try await read(
            PostgresQuery(
                unsafeSQL: "SELECT sha256, size FROM \(schema).assets WHERE sha256 IN (SELECT decode(h, 'hex') FROM unnest($1::text[]) AS h)",
                binds: try Self.binds(assets.map(\.sha256.hex)))
        ) {
            let (digest, size) = try row.decode((Data, Int64).self)
            held[digest] = size
        }
        return assets.filter { held[Data($0.sha256.bytes)] != $0.size }
    }

    public func putAsset(_ asset: Asset, bytes: AssetBytes) async throws -> Bool {
        try writable()
        let key = Data(asset.sha256.bytes)
        return try await database.transaction { [self] connection in
            // Committed without waiting for the flush: an asset matters once a record names it, and the commit of that
            // record's write, later in the log, flushes the asset's with it. Waiting for each asset's own flush kept
            // a round of records with photos waiting for every one in turn.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            // Two writers of one asset (copies side by side, or a copy's requests) take turns; the second finds it stored.
            let lock = asset.sha256.bytes.prefix(4).reduce(Int32(0)) { $0 << 8 | Int32($1) }
            try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1), $2)", binds: try Self.binds("\(schema).assets", lock)),
                logger: logger)
            for try await row in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT size FROM \(schema).assets WHERE sha256 = $1", binds: try Self.binds(key)), logger: logger)
            where try row.decode(Int64.self) == asset.size {
                return false
            }
            try await connection.query(
                PostgresQuery(unsafeSQL: "DELETE FROM \(schema).asset_chunks WHERE sha256 = $1", binds: try Self.binds(key)), logger: logger)
            var hasher = SHA256Hasher()
            var total: Int64 = 0
            var chunk = 0
            var buffer: [UInt8] = []
            func flush() async throws {
                guard !buffer.isEmpty else { return }
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(schema).asset_chunks(sha256, n, bytes) VALUES ($1, $2, $3)",
                        binds: try Self.binds(key, chunk, Data(buffer))),
                    logger: logger)
                chunk += 1
                buffer.removeAll(keepingCapacity: true)
            }
            for try await piece in bytes {
                hasher.update(piece)
                total += Int64(piece.count)
                buffer += piece
                if buffer.count >= 1 << 20 { try await flush() }
            }
            try await flush()
            guard total == asset.size, hasher.finalize() == asset.sha256 else {
                throw BackendError(
                    .damaged, "asset \(asset.sha256): \(total) bytes received do not hash to it (expected \(asset.size)); the source is damaged")
            }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(schema).assets(sha256, size, chunks) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING",
                    binds: try Self.binds(key, total, chunk)), logger: logger)
            return true
        }
    }

    /// The asset's bytes, a chunk per request; the first chunk comes with the check that the asset is held, in one
    /// request.
    public func assetBytes(_ asset: Asset) async throws -> AssetBytes {
        let (schema, key) = (self.schema, Data(asset.sha256.bytes))
        var chunks: Int?
        var first: [UInt8]?
        for row in try await read(
            PostgresQuery(
                unsafeSQL: """
                    SELECT a.chunks, c.bytes FROM \(schema).assets a LEFT JOIN \(schema).asset_chunks c ON c.sha256 = a.sha256 AND c.n = 0
                    WHERE a.sha256 = $1 AND a.size = $2
                    """, binds: try Self.binds(key, asset.size)))
        {
            let (count, bytes) = try row.decode((Int32, Data?).self)
            chunks = Int(count)
            first = bytes.map { Array($0) }
        }
        guard let chunks else { throw BackendError(.assetNotFound, "\(name): no asset \(asset.sha256) (\(asset.size) bytes)") }
        let next = ChunkCounter()
        let firstChunk = first
        // The asset's row says how many chunks it has: a photo of one chunk takes one request, not a second to find
        // there is no more. A chunk missing from the table ends the stream early, which its reader finds short.
        return AsyncThrowingStream(unfolding: { [self] in
            let index = next.take()
            guard index > 0 else { return firstChunk }
            guard index < chunks else { return nil }
            var piece: [UInt8]?
            for row in try await read(
                PostgresQuery(unsafeSQL: "SELECT bytes FROM \(schema).asset_chunks WHERE sha256 = $1 AND n = $2", binds: try Self.binds(key, index)))
            {
                piece = Array(try row.decode(Data.self))
            }
            return piece
        })
    }

    // MARK: Change feed

    /// The schema's `store_id`, given when this Ferry first wrote it; `nil` for a schema it has not written.
    public func feedIdentity() async throws -> String? {
        var found: String?
        for row in try await read(PostgresQuery(unsafeSQL: "SELECT value FROM \(schema).ferry_meta WHERE key = 'store_id'")) {
            found = try row.decode(String.self)
        }
        return found
    }

    public func changes(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> ChangePage {
        let store = name
        let page = try await feedPage(in: zone, since: token, limit: limit, kind: "rows", into: [FeedRow]()) { rows, row in
            let read = try FeedRow(row, store: store)
            rows.append(read)
            return read.sequence
        }
        let changes = try await Self.decodeFeed(page.content, zone: zone, store: name)
        return ChangePage(changes: changes, syncToken: page.syncToken, moreComing: page.moreComing)
    }

    /// A page of a zone's change feed (the feed query's rows, each given to `take` as it arrives, which gives its change
    /// sequence; one more than a page counted but not taken), with the page's token.
    ///
    /// `kind` names what the rows are taken into, which a snapshot's page read ahead must match.
    func feedPage<Content: Sendable>(
        in zone: ZoneID, since token: SyncToken?, limit: Int, kind: String, into empty: Content,
        _ take: @escaping @Sendable (inout Content, PostgresRow) throws -> Int64
    ) async throws -> (content: Content, syncToken: SyncToken, moreComing: Bool) {
        let (number, last, after) = try await feedStart(in: zone, since: token)
        let pageLimit = max(limit, 1)
        let initial = FeedRows(content: empty)
        let accumulate: @Sendable (inout FeedRows<Content>, PostgresRow) throws -> Void = { page, row in
            page.count += 1
            guard page.count <= pageLimit else { return }
            page.lastSequence = try take(&page.content, row)
        }
        let page: FeedRows<Content>
        if let snapshot {
            page = try await snapshot.page(
                feedQuery(zone: number, after: after, limit: pageLimit), key: "\(kind) \(number) \(after) \(pageLimit)", into: initial, accumulate)
        } else {
            var rows = initial
            for row in try await read(feedQuery(zone: number, after: after, limit: pageLimit)) { try accumulate(&rows, row) }
            page = rows
        }
        let moreComing = page.count > pageLimit
        let lastSeen = page.lastSequence ?? after
        // A snapshot does not change: the next page is read while this one is decoded and used.
        if let snapshot, moreComing {
            await snapshot.readAhead(
                try feedQuery(zone: number, after: lastSeen, limit: pageLimit), key: "\(kind) \(number) \(lastSeen) \(pageLimit)",
                into: initial, accumulate)
        }
        return (page.content, Self.token(number, moreComing ? lastSeen : max(lastSeen, last)), moreComing)
    }

    /// Where a page of `zone`'s feed starts: the zone's number and last change sequence, and the sequence after which
    /// the page's changes come (`token`'s).
    private func feedStart(in zone: ZoneID, since token: SyncToken?) async throws -> (number: Int64, last: Int64, after: Int64) {
        let found = try await feedState(of: zone)
        guard let (number, last) = found else { throw BackendError(.zoneNotFound, "\(name): no zone \(zone)") }
        var after: Int64 = 0
        if let token {
            guard let (tokenZone, sequence) = Self.parse(token), tokenZone == number else {
                throw BackendError(.invalidToken, "\(name): sync token \(token) was not issued for zone \(zone); start without a token")
            }
            after = sequence
        }
        return (number, last, after)
    }

    /// A zone's number and last change sequence, `nil` when there is no such zone; remembered by a snapshot, in which
    /// they cannot change.
    private func feedState(of zone: ZoneID) async throws -> (number: Int64, last: Int64)? {
        if let snapshot, let known = await snapshot.zones[zone] { return known }
        var found: (number: Int64, last: Int64)?
        for row in try await read(
            PostgresQuery(
                unsafeSQL: "SELECT id, last_seq FROM \(schema).zones WHERE zone_name = $1 AND owner_name = $2",
                binds: try Self.binds(zone.zoneName, zone.ownerName))
        ) { found = try row.decode((Int64, Int64).self) }
        await snapshot?.remember(zone, found)
        return found
    }

    /// The query of a page of a zone's change feed: the changes after a sequence, one more than a page to tell
    /// whether more come.
    private func feedQuery(zone: Int64, after: Int64, limit: Int) throws -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                SELECT \(FeedRow.selectList(fields: fieldsColumn())) FROM \(schema).records
                WHERE zone = $1 AND seq > $2 ORDER BY seq LIMIT $3
                """, binds: try Self.binds(zone, after, limit + 1))
    }

    /// The changes of a feed page's rows, decoded in parts side by side (a page is a few thousand records).
    private static func decodeFeed(_ rows: [FeedRow], zone: ZoneID, store: String) async throws -> [RecordChange] {
        @Sendable func decode(_ rows: ArraySlice<FeedRow>) throws -> [RecordChange] {
            var changes: [RecordChange] = []
            changes.reserveCapacity(rows.count)
            for row in rows {
                if let deletion = row.tombstone(in: zone) {
                    changes.append(.deletion(deletion))
                } else {
                    changes.append(.record(try record(row, zone: zone, store: store)))
                }
            }
            return changes
        }
        guard rows.count >= 512 else { return try decode(rows[...]) }
        let middle = rows.count / 2
        async let first = try decode(rows[..<middle])
        let second = try decode(rows[middle...])
        return try await first + second
    }

    // MARK: Journal

    public func checkpoint(run: String) async throws -> CopyCheckpoint? {
        var found: CopyCheckpoint?
        try await database.query(
            PostgresQuery(unsafeSQL: "SELECT done, finished FROM \(schema).copy_journal WHERE run = $1", binds: try Self.binds(run))
        ) { row in
            let (done, finished) = try row.decode((Int64, Bool).self)
            found = CopyCheckpoint(done: done, finished: finished)
        }
        return found
    }

    public func setCheckpoint(run: String, source: String, _ checkpoint: CopyCheckpoint) async throws {
        try await database.execute(try journalUpsert(run: run, source: source, checkpoint))
    }

    /// The statement that records a run's checkpoint.
    func journalUpsert(run: String, source: String, _ checkpoint: CopyCheckpoint) throws -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                INSERT INTO \(schema).copy_journal(run, done, finished, source) VALUES ($1, $2, $3, $4)
                ON CONFLICT (run) DO UPDATE SET done = excluded.done, finished = excluded.finished, source = excluded.source
                """, binds: try Self.binds(run, checkpoint.done, checkpoint.finished, source))
    }

    public func deferRecord(_ record: Record, run: String) async throws {
        var bare = record
        bare.system = nil
        try await database.execute(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(schema).copy_deferred(run, seq, record)
                    SELECT $1, coalesce(max(seq), 0) + 1, $2::jsonb FROM \(schema).copy_deferred WHERE run = $1
                    """, binds: try Self.binds(run, String(decoding: bare.canonicalJSON, as: UTF8.self))))
    }

    public func takeDeferred(run: String) async throws -> [Record] {
        // DELETE … RETURNING gives rows in no particular order: they are put back in the order they were deferred.
        var records: [(Int64, Record)] = []
        try await database.query(
            PostgresQuery(
                unsafeSQL: "DELETE FROM \(schema).copy_deferred WHERE run = $1 RETURNING seq, record::text", binds: try Self.binds(run))
        ) { row in
            let (sequence, text) = try row.decode((Int64, String).self)
            records.append((sequence, try Self.record(json: text, store: self.name)))
        }
        return records.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Ends the connection; a snapshot ends only its own transaction and connection.
    public func close() async throws {
        if let snapshot {
            await snapshot.close()
            return
        }
        await claims.release()
        await database.close()
    }

    // MARK: Helpers

    /// A `FROM` clause giving, as `r`, the `columns` of the records named by the array `$3` in the zone named by `$1`
    /// and `$2`: one primary-key probe per name, whatever the planner's statistics say.
    ///
    /// During and right after a first copy they are stale: a plain `name = ANY($3)` may scan the whole zone for each
    /// batch, and a lateral subquery the planner pulls up into a join may be hashed against the whole table (see
    /// Docs/design-notes.md). `LIMIT 1` (a name is unique in its zone) keeps the subquery a probe per name.
    static func byName(_ schema: String, columns: String) -> String {
        """
        unnest($3::text[]) AS wanted(name) CROSS JOIN LATERAL (
            SELECT \(columns) FROM \(schema).records
            WHERE zone = (SELECT id FROM \(schema).zones WHERE zone_name = $1 AND owner_name = $2) AND name = wanted.name LIMIT 1) r
        """
    }

    private static func token(_ zone: Int64, _ sequence: Int64) -> SyncToken { SyncToken(tag: "p", zone: zone, sequence: sequence) }

    private static func parse(_ token: SyncToken) -> (Int64, Int64)? { token.position(tag: "p") }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// A stored record's system fields, from its row.
    private static func system(tag: String, created: Int64, modified: Int64) -> SystemFields {
        SystemFields(changeTag: tag, created: RecordStamp(timestamp: created), modified: RecordStamp(timestamp: modified))
    }

    /// A stored record decoded from its feed row.
    private static func record(_ row: FeedRow, zone: ZoneID, store: String) throws -> Record {
        try record(
            fields: row.fields, name: row.name, type: row.type, zone: zone,
            system: system(tag: row.tag, created: row.created, modified: row.modified), store: store)
    }

    /// A stored record decoded from its row: the `jsonb` text of its fields object (read as bytes, not made a string
    /// first; `nil` for SQL's NULL, which a live record never has) with the row's name, type and zone.
    private static func record(
        fields: ByteBuffer?, name: String, type: String, zone: ZoneID, system: SystemFields?, store: String
    ) throws -> Record {
        func damaged(_ reason: String) -> BackendError { FeedRow.damaged(reason, record: name, in: zone, store: store) }
        guard let fields else { throw damaged("they are NULL") }
        do {
            return try fields.withUnsafeReadableBytes { bytes throws(RecordError) in
                try CloudKitJSONDecoder().decodeRecord(fields: bytes, recordType: type, recordName: name, zoneID: zone, system: system)
            }
        } catch {
            throw damaged("\(error)")
        }
    }

    /// A record kept whole as CloudKit JSON (a deferred record), without system fields.
    private static func record(json text: String, store: String) throws -> Record {
        guard case .record(let record) = try? CloudKitJSONDecoder().decode(bytes: Array(text.utf8)) else {
            throw BackendError(.damaged, "\(store): a stored record does not decode as CloudKit JSON; verify the database")
        }
        return record
    }

    static func binds(_ values: any PostgresEncodable...) throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { try bindings.append(value) }
        return bindings
    }
}

/// The next chunk an asset stream reads, counted by its one consumer.
private final class ChunkCounter: @unchecked Sendable {
    // @unchecked: the stream's unfolding closure is called by its one consumer, one call at a time.
    private var next = 0

    func take() -> Int {
        defer { next += 1 }
        return next
    }
}

extension [UInt8] {
    /// Whether canonical JSON text holds an escaped NUL (`\u0000`), which `jsonb` refuses.
    var containsEscapedNUL: Bool {
        withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return false }
            var index = 0
            while index < bytes.count {
                // The next backslash, found a vector at a time by memchr: most bodies hold none.
                guard let found = memchr(base + index, Int32(UInt8(ascii: "\\")), bytes.count - index) else { return false }
                let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if at + 5 < bytes.count && bytes[at + 1] == UInt8(ascii: "u") && bytes[at + 2] == UInt8(ascii: "0")
                    && bytes[at + 3] == UInt8(ascii: "0") && bytes[at + 4] == UInt8(ascii: "0") && bytes[at + 5] == UInt8(ascii: "0")
                {
                    return true
                }
                // An escape is a backslash and the character after it; stepping over both keeps an escaped backslash
                // followed by `u0000` from matching.
                index = at + 2
            }
            return false
        }
    }
}
