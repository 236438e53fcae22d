import Foundation
import Logging
import PostgresNIO

/// Ferry's tables in a PostgreSQL schema, and their migrations.
///
/// `ferry_meta` holds the layout version; each migration runs in one transaction, so a schema is at one version or
/// the one before. A schema made by a newer Ferry is refused rather than written in a layout this one does not know.
public enum PostgresSchema {
    /// The layout this Ferry writes.
    public static let version = 7

    /// The earliest layout this Ferry writes as it is: layout 6 differs from 7 only in how record names collate, which
    /// a schema keeps while views depend on them (see ``migrate(_:migrating:held:)``).
    public static let writtenFrom = 6

    /// The layout that collates record names by their bytes, which views that use the names hold back.
    static let namesInByteOrder = 7

    /// Creates the schema or brings it to ``version``; `migrating` is told the layout an existing schema starts from
    /// before it is migrated (which, for a large one, takes a while).
    ///
    /// Views that use the record names' columns (a user's, or `pg-views`' own) hold a schema at layout 6, since
    /// PostgreSQL cannot change a column's collation under a view, as does a role that does not own the tables (a
    /// column is altered by its table's owner). The migration then stops there, and `held` is told the layout it stays
    /// at and what to do about it; layout 6 is written as it is, and the next migration tries again.
    /// - Returns: the version it was at before (0 for a new schema).
    /// - Throws: ``PostgresBackendError`` `newer-schema` (78), `permission` (77) without CREATE on the database.
    @discardableResult
    public static func migrate(
        _ database: PostgresDatabase, migrating: (_ from: Int) -> Void = { _ in }, held: (_ layout: Int, _ reason: String) -> Void = { _, _ in }
    ) async throws -> Int {
        let schema = database.settings.schema
        let found = try await readableVersion(database)
        guard found < version else {
            try await ensureIdentity(database)
            return found
        }
        if found == namesInByteOrder - 1 {
            // Held back as when last tried: nothing to migrate, and nothing to say but why.
            let reason = try await database.transaction { [logger = database.logger] connection in
                try await namesCollationHeld(schema: schema, on: connection, logger: logger)
            }
            if let reason {
                held(found, heldMessage(database, reason: reason))
                try await ensureIdentity(database)
                return found
            }
        }
        if found > 0 { migrating(found) }
        // One migration of a schema at a time: two copies started together into a new schema both found it missing,
        // and the second's CREATE SCHEMA failed on the first's. The layout is read again once it is this one's turn.
        let (before, stop) = try await database.transaction(inTurnOf: schema + ".migrate") { [logger = database.logger] connection in
            let now = try await currentVersion(schema: schema, on: connection, logger: logger)
            guard now < version else { return (now, nil as (layout: Int, reason: String)?) }
            var reached = now
            var stop: (layout: Int, reason: String)?
            for step in (now + 1)...version {
                if step == namesInByteOrder, now > 0, let reason = try await namesCollationHeld(schema: schema, on: connection, logger: logger) {
                    stop = (reached, reason)
                    break
                }
                for statement in statements(step, schema: schema) {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                reached = step
            }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(schema).ferry_meta(key, value) VALUES ('version', '\(reached)')
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value
                        """), logger: logger)
            return (now, stop)
        }
        if let stop { held(stop.layout, heldMessage(database, reason: stop.reason)) }
        // A newer Ferry migrated it meanwhile: refused as such.
        guard before <= version else { return try await readableVersion(database) }
        try await ensureIdentity(database)
        return before
    }

    /// What a schema held at layout 6 is told: `reason`, why, and what to do about it.
    private static func heldMessage(_ database: PostgresDatabase, reason: String) -> String {
        "\(database.settings): schema \(database.settings.schema) stays at Ferry's layout \(namesInByteOrder - 1) (written as it is, "
            + "loaded more slowly): layout \(namesInByteOrder) collates its record names by their bytes (\"C\"), and \(reason)"
    }

    /// Why the record names' collation cannot change now (and what to do about it), `nil` when it can: views that use
    /// the columns, or a role that does not own the tables.
    static func namesCollationHeld(schema: String, on connection: PostgresConnection, logger: Logger) async throws -> String? {
        let views = try await dependentViews(schema: schema, on: connection, logger: logger)
        if !views.isEmpty {
            return "the views \(views.joined(separator: ", ")) use them: drop them and run ferry again to finish (ferry pg-views remakes "
                + "its own views and finishes it)"
        }
        var owner: String?
        for try await row in try await connection.query(
            """
            SELECT pg_get_userbyid(c.relowner) FROM pg_class c
            WHERE c.relnamespace = to_regnamespace(\(schema)) AND c.relname ~ '^(records|refs)(_|$)' AND c.relkind IN ('r', 'p')
              AND NOT pg_has_role(current_user, c.relowner, 'USAGE')
            LIMIT 1
            """, logger: logger)
        {
            owner = try row.decode(String.self)
        }
        if let owner {
            return "only the tables' owner, \(owner), may change a column: its next ferry copy into the schema finishes it"
        }
        return nil
    }

    /// The views, by qualified name, that use the columns of Ferry's record names in `schema` (which hold back the
    /// change of their collation).
    package static func dependentViews(schema: String, on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var views: [String] = []
        for try await row in try await connection.query(
            """
            SELECT DISTINCT v.oid::regclass::text FROM pg_depend d
            JOIN pg_rewrite w ON w.oid = d.objid JOIN pg_class v ON v.oid = w.ev_class
            JOIN pg_class t ON t.oid = d.refobjid JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
            WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass AND v.oid <> t.oid
              AND t.relnamespace = to_regnamespace(\(schema))
              AND ((t.relname ~ '^records(_|$)' AND a.attname = 'name') OR (t.relname ~ '^refs(_|$)' AND a.attname IN ('source', 'target')))
            ORDER BY 1
            """, logger: logger)
        {
            views.append(try row.decode(String.self))
        }
        return views
    }

    /// The layout version of the schema as `connection`'s transaction sees it, 0 when it has none.
    private static func currentVersion(schema: String, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var exists = false
        for try await row in try await connection.query("SELECT to_regclass(\(schema + ".ferry_meta")) IS NOT NULL", logger: logger) {
            exists = try row.decode(Bool.self)
        }
        guard exists else { return 0 }
        var found = 0
        for try await row in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT value FROM \(schema).ferry_meta WHERE key = 'version'"), logger: logger)
        {
            found = Int(try row.decode(String.self)) ?? 0
        }
        return found
    }

    /// Gives the schema its identity (`store_id` in `ferry_meta`, a random UUID) if it has none yet: what tells its
    /// change feed from another's (``PostgresRecordStore/feedIdentity()``).
    ///
    /// A role that may write records but not `ferry_meta` leaves the schema without one: its positions then carry none,
    /// as positions printed before Ferry kept one.
    static func ensureIdentity(_ database: PostgresDatabase) async throws {
        do {
            try await database.execute(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(database.settings.schema).ferry_meta(key, value) VALUES ('store_id', $1) ON CONFLICT (key) DO NOTHING",
                    binds: try PostgresRecordStore.binds(UUID().uuidString.lowercased())))
        } catch let error as PostgresBackendError where error.code == .permission {
            database.logger.debug("\(database.settings): no identity given to schema \(database.settings.schema): \(error.message)")
        }
    }

    /// The layout version of the schema (0 when it has none), refusing one made by a newer Ferry: the layouts this
    /// Ferry reads.
    /// - Throws: ``PostgresBackendError`` `newer-schema` (78).
    public static func readableVersion(_ database: PostgresDatabase) async throws -> Int {
        let found = try await currentVersion(database)
        guard found <= version else {
            throw PostgresBackendError(
                .newerSchema,
                "\(database.settings): schema \(database.settings.schema) has Ferry's layout version \(found), newer than this Ferry writes (\(version)); update Ferry"
            )
        }
        return found
    }

    /// The layout version of the schema, 0 when it has none.
    public static func currentVersion(_ database: PostgresDatabase) async throws -> Int {
        let schema = database.settings.schema
        return try await database.transaction { [logger = database.logger] connection in
            try await currentVersion(schema: schema, on: connection, logger: logger)
        }
    }

    /// The statements that take a schema from `step - 1` to `step`.
    ///
    /// `schema` is a plain identifier (``PostgresSettings`` checks it), so it is written into the statements as it is.
    package static func statements(_ step: Int, schema: String) -> [String] {
        switch step {
        case 1:
            return [
                "CREATE SCHEMA IF NOT EXISTS \(schema)",
                "CREATE TABLE \(schema).ferry_meta (key text PRIMARY KEY, value text NOT NULL)",
                """
                CREATE TABLE \(schema).zones (
                    id bigserial PRIMARY KEY, zone_name text NOT NULL, owner_name text NOT NULL, last_seq bigint NOT NULL DEFAULT 0,
                    UNIQUE (zone_name, owner_name))
                """,
                """
                CREATE TABLE \(schema).records (
                    zone bigint NOT NULL REFERENCES \(schema).zones(id) ON DELETE CASCADE, name text NOT NULL, type text NOT NULL,
                    tag text NOT NULL, seq bigint NOT NULL, created timestamptz NOT NULL, modified timestamptz NOT NULL,
                    created_by text, modified_by text, deleted boolean NOT NULL DEFAULT false, digest bytea, fields jsonb,
                    PRIMARY KEY (zone, name))
                """,
                "CREATE INDEX records_feed ON \(schema).records (zone, seq)",
                """
                CREATE TABLE \(schema).refs (
                    zone bigint NOT NULL, source text NOT NULL, target text NOT NULL, action text NOT NULL,
                    FOREIGN KEY (zone, source) REFERENCES \(schema).records(zone, name) ON DELETE CASCADE)
                """,
                "CREATE INDEX refs_target ON \(schema).refs (zone, target)",
                "CREATE INDEX refs_source ON \(schema).refs (zone, source)",
                "CREATE TABLE \(schema).assets (sha256 bytea PRIMARY KEY, size bigint NOT NULL, chunks integer NOT NULL)",
                "CREATE TABLE \(schema).asset_chunks (sha256 bytea NOT NULL, n integer NOT NULL, bytes bytea NOT NULL, PRIMARY KEY (sha256, n))",
                """
                CREATE TABLE \(schema).copy_journal (
                    run text PRIMARY KEY, done bigint NOT NULL, finished boolean NOT NULL, source text NOT NULL)
                """,
                "CREATE TABLE \(schema).copy_deferred (run text NOT NULL, seq bigint NOT NULL, record jsonb NOT NULL, PRIMARY KEY (run, seq))",
                "INSERT INTO \(schema).zones(zone_name, owner_name) VALUES ('_defaultZone', '__defaultOwner__')",
            ]
        case 2:
            // Foreign keys checked a row of `zones` for every record and a record for every reference as they were
            // written, which bulk loads pay for per row; Ferry deletes a zone's records and references itself.
            return [
                "ALTER TABLE \(schema).refs DROP CONSTRAINT IF EXISTS refs_zone_source_fkey",
                "ALTER TABLE \(schema).records DROP CONSTRAINT IF EXISTS records_zone_fkey",
            ]
        case 3:
            // `fields` holds the record's fields object only: its name, type and zone are columns of their own, and
            // keeping them in the document too made every row larger for the server to parse, store and log.
            return ["UPDATE \(schema).records SET fields = fields->'fields' WHERE fields IS NOT NULL"]
        case 4:
            // A record's times are its write's, by the server's clock to the millisecond: a bulk write's COPY leaves them
            // to the columns' default instead of sending two timestamps per row for the server to parse.
            return [
                """
                ALTER TABLE \(schema).records ALTER COLUMN created SET DEFAULT date_trunc('milliseconds', now()),
                    ALTER COLUMN modified SET DEFAULT date_trunc('milliseconds', now())
                """
            ]
        case 5:
            // The change feed's index carries each row's digest and tombstone flag, so that a copy comparing digests
            // in feed order reads them from the index (an index-only scan) instead of from every row of the table.
            return [
                "DROP INDEX IF EXISTS \(schema).records_feed",
                "CREATE INDEX records_feed ON \(schema).records (zone, seq) INCLUDE (digest, deleted)",
            ]
        case 6:
            // `records` and `refs` become partitioned by zone, the tables of layout 5 their default partitions (attached
            // as they are: no row moves, their indexes kept). A zone lives in the shared partitions unless a first copy
            // into it while it was empty gave it partitions of its own, loaded without secondary indexes and indexed
            // at the end (``PostgresRecordStore/endBulkLoad()``): a partition per zone for every zone would cost each
            // zone's creation its tables and indexes, and the server a lock on each for any query across zones.
            return [
                "ALTER TABLE \(schema).records RENAME TO \(sharedPartition("records"))",
                "ALTER TABLE \(schema).\(sharedPartition("records")) RENAME CONSTRAINT records_pkey TO \(sharedPartition("records"))_pkey",
                "ALTER TABLE \(schema).refs RENAME TO \(sharedPartition("refs"))",
                """
                CREATE TABLE \(schema).records (
                    zone bigint NOT NULL, name text NOT NULL, type text NOT NULL, tag text NOT NULL, seq bigint NOT NULL,
                    created timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
                    modified timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
                    created_by text, modified_by text, deleted boolean NOT NULL DEFAULT false, digest bytea, fields jsonb,
                    PRIMARY KEY (zone, name)) PARTITION BY LIST (zone)
                """,
                """
                CREATE TABLE \(schema).refs (zone bigint NOT NULL, source text NOT NULL, target text NOT NULL, action text NOT NULL)
                    PARTITION BY LIST (zone)
                """,
                "ALTER TABLE \(schema).records ATTACH PARTITION \(schema).\(sharedPartition("records")) DEFAULT",
                "ALTER TABLE \(schema).refs ATTACH PARTITION \(schema).\(sharedPartition("refs")) DEFAULT",
                // No query of Ferry's looks into `fields`, and its statistics were a third of analyzing a table (each
                // sampled document read whole): a copy analyzes the partitions it loads.
                "ALTER TABLE \(schema).records ALTER COLUMN fields SET STATISTICS 0",
            ]
        case 7:
            // Record names collate by their bytes ("C"), as CloudKit compares them: the database's default collation
            // (en_US, or even C.UTF-8) compares through the C library's locale code, which was a tenth of the server's
            // time in a bulk load (the primary key's comparisons) and kept index builds from sorting by prefixes. Each
            // partition follows its parent; the indexes on these columns are rebuilt, the rows stay where they are.
            return [
                "ALTER TABLE \(schema).records ALTER COLUMN name TYPE text COLLATE \"C\"",
                "ALTER TABLE \(schema).refs ALTER COLUMN source TYPE text COLLATE \"C\", ALTER COLUMN target TYPE text COLLATE \"C\"",
            ]
        default:
            return []
        }
    }

    /// The shared (default) partition of `table` (`records` or `refs`): layout 5's table, where every zone lives that has
    /// no partition of its own.
    package static func sharedPartition(_ table: String) -> String { "\(table)_shared" }

    /// The partition of `table` (`records` or `refs`) of its own a zone has when a first copy gave it one.
    package static func partitionName(_ table: String, zone: Int64) -> String { "\(table)_z\(zone)" }

    /// A secondary index: its name, its table, and its columns as `CREATE INDEX` takes them.
    package typealias SecondaryIndex = (name: String, table: String, columns: String)

    /// The secondary indexes of a zone's partitions of its own.
    ///
    /// The change feed's, with each row's digest and tombstone flag (so that comparisons in feed order read the index
    /// alone), and the references' by target and by source.
    package static func secondaryIndexes(zone: Int64) -> [SecondaryIndex] {
        let (records, refs) = (partitionName("records", zone: zone), partitionName("refs", zone: zone))
        return secondaryIndexes(records: records, refs: refs, named: (records, refs))
    }

    /// The shared partitions' secondary indexes, the same as a zone's, named as layout 5 named them on its tables.
    package static let sharedIndexes = secondaryIndexes(
        records: sharedPartition("records"), refs: sharedPartition("refs"), named: ("records", "refs"))

    /// The secondary indexes of the partitions `records` and `refs`, their names starting with `names`.
    private static func secondaryIndexes(records: String, refs: String, named names: (records: String, refs: String)) -> [SecondaryIndex] {
        [
            ("\(names.records)_feed", records, "(zone, seq) INCLUDE (digest, deleted)"),
            ("\(names.refs)_target", refs, "(zone, target)"),
            ("\(names.refs)_source", refs, "(zone, source)"),
        ]
    }

    /// The statement that gives the zone numbered `zone` partitions of its own, without secondary indexes, if it holds
    /// nothing and has none yet.
    ///
    /// One statement, run by the server from start to end: its locks (the shared partitions', taken first and in one
    /// order, or two copies each reading them and then waiting to lock them would deadlock) are never held while a
    /// client's answer is awaited, which a stalled client would make every reader of the shared partitions wait for.
    /// Each partition is a table of its own first, with the `CHECK` that spares the attachment a scan of it. `schema`
    /// is a plain identifier (``PostgresSettings`` checks it).
    package static func ownPartitionsStatement(zone: Int64, schema: String) -> String {
        let (records, refs) = (partitionName("records", zone: zone), partitionName("refs", zone: zone))
        return """
            DO $$
            BEGIN
                PERFORM set_config('lock_timeout', '2s', true);
                LOCK TABLE \(schema).\(sharedPartition("records")), \(schema).\(sharedPartition("refs")) IN ACCESS EXCLUSIVE MODE;
                IF EXISTS (SELECT 1 FROM \(schema).records WHERE zone = \(zone)) OR EXISTS (SELECT 1 FROM \(schema).refs WHERE zone = \(zone))
                   OR to_regclass('\(schema).\(records)') IS NOT NULL THEN
                    RETURN;
                END IF;
                CREATE TABLE \(schema).\(records) (LIKE \(schema).records INCLUDING DEFAULTS, CONSTRAINT \(records)_zone CHECK (zone = \(zone)));
                ALTER TABLE \(schema).\(records) ALTER COLUMN fields SET STATISTICS 0;
                ALTER TABLE \(schema).records ATTACH PARTITION \(schema).\(records) FOR VALUES IN (\(zone));
                CREATE TABLE \(schema).\(refs) (LIKE \(schema).refs INCLUDING DEFAULTS, CONSTRAINT \(refs)_zone CHECK (zone = \(zone)));
                ALTER TABLE \(schema).refs ATTACH PARTITION \(schema).\(refs) FOR VALUES IN (\(zone));
            END $$
            """
    }
}
