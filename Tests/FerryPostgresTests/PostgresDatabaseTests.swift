import FerryBackend
import FerryCore
import FerryPostgres
import FerryRecords
import FerryTesting
import Foundation
import PostgresNIO
import Testing

/// Connecting to the real server `Scripts/test` starts, and Ferry's schema there.
@Suite struct PostgresDatabaseTests {
    /// The test server's URL; in CI a missing one is a failure, elsewhere a skip with the reason printed.
    static func serverURL() throws -> String? { try TestEnvironment.postgresURLForTest() }

    /// Settings for the test server with a schema of the test's own.
    static func settings(_ url: String, schema: String) throws -> PostgresSettings {
        try PostgresSettings(url: url + (url.contains("?") ? "&" : "?") + "schema=\(schema)&sslmode=disable")
    }

    static func schemaName() -> String { "t_\(UInt32.random(in: 0...UInt32.max))" }

    /// Runs `body` with the test server's database in a schema of the test's own (migrated unless `migrated` is
    /// false), dropped afterwards, also when `body` fails; does nothing where there is no test server.
    static func withSchema(migrated: Bool = true, _ body: (FerryPostgres.PostgresDatabase, String) async throws -> Void) async throws {
        guard let url = try serverURL() else { return }
        let schema = schemaName()
        let database = try await PostgresDatabase.open(try settings(url, schema: schema))
        do {
            if migrated { try await PostgresSchema.migrate(database) }
            try await body(database, schema)
        } catch {
            try? await database.execute("DROP SCHEMA \(unescaped: schema) CASCADE")
            await database.close()
            throw error
        }
        try? await database.execute("DROP SCHEMA \(unescaped: schema) CASCADE")
        await database.close()
    }

    @Test func theSchemaIsCreatedOnceAndANewerOneIsRefused() async throws {
        try await Self.withSchema(migrated: false) { database, schema in
            #expect(try await PostgresSchema.currentVersion(database) == 0)
            #expect(try await PostgresSchema.migrate(database) == 0)
            #expect(try await PostgresSchema.migrate(database) == PostgresSchema.version, "a second migration changes nothing")
            try await database.execute("UPDATE \(unescaped: schema).ferry_meta SET value = '99' WHERE key = 'version'")
            await #expect {
                try await PostgresSchema.migrate(database)
            } throws: { error in
                (error as? PostgresBackendError)?.code == .newerSchema && (error as? PostgresBackendError)?.kind == .config
                    && (error as? PostgresBackendError)?.message.contains("newer than this Ferry writes (\(PostgresSchema.version)); update Ferry")
                        == true
            }
        }
    }

    @Test func recordNamesCollateByTheirBytesInANewSchema() async throws {
        try await Self.withSchema { database, schema in
            var collations: [String: String] = [:]
            try await database.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT c.relname || '.' || a.attname, co.collname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                        JOIN pg_collation co ON co.oid = a.attcollation
                        WHERE c.relnamespace = '\(schema)'::regnamespace AND c.relkind IN ('r', 'p')
                          AND ((c.relname LIKE 'records%' AND a.attname = 'name') OR (c.relname LIKE 'refs%' AND a.attname IN ('source', 'target')))
                        """)
            ) { row in
                let (column, collation) = try row.decode((String, String).self)
                collations[column] = collation
            }
            #expect(
                collations == [
                    "records.name": "C", "records_shared.name": "C", "refs.source": "C", "refs.target": "C", "refs_shared.source": "C",
                    "refs_shared.target": "C",
                ], "\(collations)")
        }
    }

    @Test func aRoleThatDoesNotOwnTheTablesWritesLayout6AsItIsAndTheOwnerFinishesTheMigration() async throws {
        try await Self.withSchema { database, schema in
            // Layout 6, as the owner's earlier Ferry left it.
            for statement in [
                "ALTER TABLE \(schema).records ALTER COLUMN name TYPE text COLLATE \"default\"",
                "ALTER TABLE \(schema).refs ALTER COLUMN source TYPE text COLLATE \"default\", ALTER COLUMN target TYPE text COLLATE \"default\"",
                "UPDATE \(schema).ferry_meta SET value = '6' WHERE key = 'version'",
            ] {
                try await database.execute(PostgresQuery(unsafeSQL: statement))
            }
            try await Self.withRole(database, schema) { role in
                [
                    "GRANT USAGE ON SCHEMA \(schema) TO \(role)", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(role)",
                    "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA \(schema) TO \(role)",
                ]
            } _: { settings in
                let writer = try await PostgresDatabase.open(settings)
                var held: [(Int, String)] = []
                #expect(try await PostgresSchema.migrate(writer, held: { held.append(($0, $1)) }) == 6)
                #expect(held.count == 1 && held.first?.0 == 6, "\(held)")
                #expect(held.first?.1.contains("only the tables' owner, ferry, may change a column") == true, "\(held)")
                // Written as it is.
                let store = PostgresRecordStore(writer, layout: 6)
                let zone = ZoneID(zoneName: "Six")
                _ = try await store.createZone(zone)
                let record = Record(recordType: "Car", recordName: "c1", zoneID: zone, fields: ["name": .string("kept")])
                let outcomes = try await store.modify([RecordOperation(.forceReplace, record)], in: zone, atomic: true)
                #expect(outcomes.count == 1 && { if case .saved = outcomes[0] { true } else { false } }(), "\(outcomes)")
                await writer.close()
            }
            // The owner's next migration finishes it, the record kept.
            var held: [(Int, String)] = []
            #expect(try await PostgresSchema.migrate(database, held: { held.append(($0, $1)) }) == 6)
            #expect(held.isEmpty, "\(held)")
            #expect(try await PostgresSchema.currentVersion(database) == PostgresSchema.version)
            #expect(try await PostgresRecordStore(database).lookup([RecordID(recordName: "c1", zoneID: ZoneID(zoneName: "Six"))]).count == 1)
        }
    }

    /// The number of `zone` in the test's schema.
    static func zoneNumber(_ zone: ZoneID, _ database: FerryPostgres.PostgresDatabase, _ schema: String) async throws -> Int64 {
        try #require(
            try await database.rows(
                "SELECT id FROM \(unescaped: schema).zones WHERE zone_name = \(zone.zoneName) AND owner_name = \(zone.ownerName)"
            ).first?.decode(Int64.self))
    }

    /// The partitions of `records` and `refs` in the test's schema, each with how many records it holds.
    static func partitions(_ database: FerryPostgres.PostgresDatabase, _ schema: String) async throws -> [String: Int64] {
        var partitions: [String: Int64] = [:]
        try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT c.relname, (SELECT count(*) FROM \(schema).records r WHERE r.tableoid = c.oid) FROM pg_inherits i
                    JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent IN ('\(schema).records'::regclass, '\(schema).refs'::regclass)
                    """)
        ) { row in
            let (name, count) = try row.decode((String, Int64).self)
            partitions[name] = count
        }
        return partitions
    }

    /// The names of the indexes in the test's schema.
    static func indexNames(_ database: FerryPostgres.PostgresDatabase, _ schema: String) async throws -> Set<String> {
        var indexes: Set<String> = []
        try await database.query(PostgresQuery(unsafeSQL: "SELECT indexname FROM pg_indexes WHERE schemaname = '\(schema)'")) { row in
            indexes.insert(try row.decode(String.self))
        }
        return indexes
    }

    /// Whether a table or index `name` exists in the test's schema.
    static func exists(_ name: String, _ database: FerryPostgres.PostgresDatabase, _ schema: String) async throws -> Bool {
        try await database.rows(PostgresQuery(unsafeSQL: "SELECT to_regclass('\(schema).\(name)') IS NOT NULL")).first?.decode(Bool.self) ?? false
    }

    /// Runs `body` with the settings of a role made for it in the test's schema, given what `grants` says for its name;
    /// the role, and what it owns, are dropped afterwards.
    static func withRole(
        _ database: FerryPostgres.PostgresDatabase, _ schema: String, granted grants: (_ role: String) -> [String],
        _ body: (PostgresSettings) async throws -> Void
    ) async throws {
        let role = "w_\(UInt32.random(in: 0...UInt32.max))"
        for statement in ["CREATE ROLE \(role) LOGIN PASSWORD 'pw'"] + grants(role) {
            try await database.execute(PostgresQuery(unsafeSQL: statement))
        }
        let url = try #require(try serverURL())
        let components = try #require(URLComponents(string: url))
        let settings = try Self.settings(
            "postgres://\(role):pw@\(components.host ?? "127.0.0.1"):\(components.port ?? 5432)\(components.path)", schema: schema)
        do {
            try await body(settings)
        } catch {
            for statement in ["DROP OWNED BY \(role)", "DROP ROLE \(role)"] { try? await database.execute(PostgresQuery(unsafeSQL: statement)) }
            throw error
        }
        for statement in ["DROP OWNED BY \(role)", "DROP ROLE \(role)"] { try await database.execute(PostgresQuery(unsafeSQL: statement)) }
    }

    /// Two copies started together into a new schema: one makes it, the other waits and finds it made.
    @Test func migrationsOfOneSchemaTakeTurns() async throws {
        try await Self.withSchema(migrated: false) { database, _ in
            let databases = [try await PostgresDatabase.open(database.settings), try await PostgresDatabase.open(database.settings)]
            let before = try await withThrowingTaskGroup(of: Int.self) { group in
                for other in databases { group.addTask { try await PostgresSchema.migrate(other) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(before.sorted() == [0, PostgresSchema.version], "one made it, the other found it made")
            #expect(try await PostgresSchema.currentVersion(database) == PostgresSchema.version)
            for other in databases { await other.close() }
        }
    }

    @Test func aSchemaOfAnEarlierLayoutIsBroughtUpToDateKeepingItsData() async throws {
        try await Self.withSchema(migrated: false) { database, schema in
            // Layout 1 as the first Ferry made it, with a record in a zone, kept whole as CloudKit JSON in `fields`.
            for statement in PostgresSchema.statements(1, schema: schema) { try await database.execute(PostgresQuery(unsafeSQL: statement)) }
            try await database.execute(PostgresQuery(unsafeSQL: "INSERT INTO \(schema).ferry_meta(key, value) VALUES ('version', '1')"))
            let store = PostgresRecordStore(database)
            let zone = ZoneID(zoneName: "Old")
            let record = Record(recordType: "Car", recordName: "c1", zoneID: zone, fields: ["name": .string("kept")])
            let content = RecordContent(record)
            try await database.execute(
                PostgresQuery(unsafeSQL: "INSERT INTO \(schema).zones(zone_name, owner_name, last_seq) VALUES ('Old', '__defaultOwner__', 1)"))
            let body = String(decoding: content.body, as: UTF8.self)
            try await database.execute(
                """
                INSERT INTO \(unescaped: schema).records(zone, name, type, tag, seq, created, modified, digest, fields)
                SELECT id, 'c1', 'Car', '1', 1, now(), now(), decode(\(content.digest.description), 'hex'), \(body)::jsonb
                FROM \(unescaped: schema).zones WHERE zone_name = 'Old'
                """)

            // Read as it is before it is migrated, and not written.
            let reader = PostgresRecordStore(database, layout: 1)
            var read = try #require(try await reader.fetch([record.id])[record.id])
            read.system = nil
            #expect(read == record)
            let page = try await reader.changes(in: zone, since: nil, limit: 10)
            #expect(page.changes.count == 1 && page.changes.first?.recordName == "c1")
            await #expect {
                _ = try await reader.modify([RecordOperation(.forceReplace, record)], in: zone, atomic: false)
            } throws: { error in
                (error as? PostgresBackendError)?.code == .olderSchema && (error as? PostgresBackendError)?.kind == .config
            }

            #expect(try await PostgresSchema.migrate(database) == 1)
            #expect(try await PostgresSchema.currentVersion(database) == PostgresSchema.version)
            var fetched = try #require(try await store.fetch([record.id])[record.id])
            fetched.system = nil
            #expect(fetched == record)
            #expect(try await store.lookup([record.id])[record.id]?.contentDigest == content.digest, "the digest stays the content's")
            var kept = ""
            try await database.query(PostgresQuery(unsafeSQL: "SELECT fields::text FROM \(schema).records WHERE name = 'c1'")) { row in
                kept = try row.decode(String.self)
            }
            #expect(kept == #"{"name": {"type": "STRING", "value": "kept"}}"#, "layout 3 keeps the fields object only")
            var foreignKeys = -1
            try await database.query(
                PostgresQuery(unsafeSQL: "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND connamespace = '\(schema)'::regnamespace")
            ) { row in foreignKeys = Int(try row.decode(Int64.self)) }
            #expect(foreignKeys == 0, "layout 2 keeps no foreign keys")
            var feed = ""
            try await database.query(
                PostgresQuery(unsafeSQL: "SELECT indexdef FROM pg_indexes WHERE schemaname = '\(schema)' AND indexname = 'records_feed'")
            ) { row in feed = try row.decode(String.self) }
            #expect(feed.hasSuffix("(zone, seq) INCLUDE (digest, deleted)"), "layout 5's feed index covers digest comparisons: \(feed)")
            // Layout 6: the tables partitioned by zone, the earlier ones their shared (default) partitions, rows and all.
            let partitions = try await Self.partitions(database, schema)
            #expect(partitions == ["records_shared": 1, "refs_shared": 0], "\(partitions)")
            // A zone's records and references go with it all the same.
            #expect(try await store.deleteZone(zone))
            #expect(try await store.lookup([record.id]).isEmpty)
        }
    }

    @Test func theFieldsColumnHoldsEachRecordsFieldsObjectWrittenEitherWay() async throws {
        try await Self.withSchema { database, schema in
            let store = PostgresRecordStore(database)
            let zone = ZoneID(zoneName: "Fields")
            _ = try await store.createZone(zone)
            let record = { (name: String) in
                Record(recordType: "Car", recordName: name, zoneID: zone, fields: ["name": .string("a \\ \"b\""), "n": .int64(7)])
            }
            // One record through COPY (a bulk write), one through INSERT … ON CONFLICT.
            let bulk = [record("c1")]
            let creation = try await store.prepareCreation(bulk, contents: bulk.map(RecordContent.init), in: zone)
            #expect(try await store.createAbsent(creation)?.allSatisfy { if case .saved = $0 { true } else { false } } == true)
            _ = try await store.modify([RecordOperation(.create, record("c2"))], in: zone, atomic: false)
            var stored: [String: String] = [:]
            try await database.query(PostgresQuery(unsafeSQL: "SELECT name, fields::text FROM \(schema).records ORDER BY name")) { row in
                let (name, fields) = try row.decode((String, String).self)
                stored[name] = fields
            }
            let expected = #"{"n": {"type": "INT64", "value": 7}, "name": {"type": "STRING", "value": "a \\ \"b\""}}"#
            #expect(stored == ["c1": expected, "c2": expected])
            for name in ["c1", "c2"] {
                var fetched = try #require(try await store.fetch([RecordID(recordName: name, zoneID: zone)]).values.first)
                fetched.system = nil
                #expect(fetched == record(name))
            }
        }
    }

    @Test func recordsAreStampedWithTheServersTimeToTheMillisecondEitherWay() async throws {
        try await Self.withSchema { database, schema in
            let store = PostgresRecordStore(database)
            let zone = ZoneID(zoneName: "Times")
            _ = try await store.createZone(zone)
            func serverTime() async throws -> Int64 {
                try await database.rows(PostgresQuery(unsafeSQL: "SELECT \(PostgresRecordStore.serverTime)")).first?.decode(Int64.self) ?? 0
            }
            let before = try await serverTime()
            let bulk = [Record(recordType: "Car", recordName: "c1", zoneID: zone), Record(recordType: "Car", recordName: "c2", zoneID: zone)]
            let creation = try await store.prepareCreation(bulk, contents: bulk.map(RecordContent.init), in: zone)
            let outcomes = try #require(try await store.createAbsent(creation))
            let modified = try await store.modify(
                [RecordOperation(.create, Record(recordType: "Car", recordName: "c3", zoneID: zone))], in: zone, atomic: false)
            let after = try await serverTime()
            for outcome in outcomes + modified {
                guard case .saved(let written) = outcome else {
                    Issue.record("not saved: \(outcome)")
                    continue
                }
                let stamp = try #require(written.system?.created?.timestamp)
                #expect(written.system?.modified?.timestamp == stamp && (before...after).contains(stamp), "\(before) \(stamp) \(after)")
                #expect(try await store.fetch([written.id])[written.id]?.system == written.system, "the outcome has what is stored")
            }
            // A COPY leaves the times to the columns' defaults, which people's own inserts get too.
            var defaults: [String] = []
            try await database.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT column_default FROM information_schema.columns
                        WHERE table_schema = '\(schema)' AND table_name = 'records' AND column_name IN ('created', 'modified')
                        """)
            ) { row in defaults.append(try row.decode(String.self)) }
            #expect(defaults == Array(repeating: "date_trunc('milliseconds'::text, now())", count: 2))
        }
    }

    @Test func aBulkWriteKeepsNamesTypesAndTextsAsTheyAreWithTheStoresOwnClock() async throws {
        try await Self.withSchema { database, _ in
            let store = PostgresRecordStore(database, clock: { 1_767_225_600_123 })
            let zone = ZoneID(zoneName: "Odd\tzone")
            _ = try await store.createZone(zone)
            let names = ["tab\there", "new\nline", "back\\slash", "ünï·cødé 🚗", "\r", String(repeating: "x", count: 300)]
            let records = names.map { name in
                Record(
                    recordType: "Type\\with\tescapes", recordName: name, zoneID: zone,
                    fields: [
                        "text": .string("\\N \t \n \\x00 \"q\""),
                        "ref": .reference(Reference(recordName: names[0], zoneID: zone, action: .deleteSelf)),
                    ])
            }
            let creation = try await store.prepareCreation(records, contents: records.map(RecordContent.init), in: zone)
            let outcomes = try #require(try await store.createAbsent(creation))
            #expect(outcomes.allSatisfy { $0.errorCode == nil })
            let fetched = try await store.fetch(records.map(\.id))
            for record in records {
                var found = try #require(fetched[record.id], "\(record.recordName)")
                #expect(found.system?.created?.timestamp == 1_767_225_600_123 && found.system?.modified?.timestamp == 1_767_225_600_123)
                found.system = nil
                #expect(found == record)
            }
            // The DELETE_SELF references went in too: deleting their target takes the others with it.
            _ = try await store.modify([RecordOperation(.forceDelete, records[0])], in: zone, atomic: false)
            #expect(try await store.lookup(records.map(\.id)).values.allSatisfy(\.isDeleted))
        }
    }

    @Test func aFirstLoadIntoAnEmptyZoneGetsPartitionsOfItsOwnIndexedAtTheEnd() async throws {
        try await Self.withSchema { database, schema in
            let store = PostgresRecordStore(database)
            // Another zone with a record, in the shared partitions: their indexes stay as they are whatever the load does.
            let other = ZoneID(zoneName: "Other")
            _ = try await store.createZone(other)
            let kept = Record(recordType: "Note", recordName: "kept", zoneID: other)
            _ = try await store.modify([RecordOperation(.forceReplace, kept)], in: other, atomic: false)
            let zone = ZoneID(zoneName: "Large")
            _ = try await store.createZone(zone)
            let number = try await Self.zoneNumber(zone, database, schema)
            func indexes() async throws -> Set<String> { try await Self.indexNames(database, schema) }
            func partitions() async throws -> [String: Int64] { try await Self.partitions(database, schema) }
            let (records_, refs_) = (PostgresSchema.partitionName("records", zone: number), PostgresSchema.partitionName("refs", zone: number))
            let secondary = Set(PostgresSchema.secondaryIndexes(zone: number).map(\.name))
            let shared: Set = ["records_feed", "refs_target", "refs_source"]
            #expect(try await partitions() == ["records_shared": 1, "refs_shared": 0], "a zone is made in the shared partitions")
            #expect(try await !store.beginBulkLoad(), "nothing is deferred up front")
            // A copy claims its zones before it writes them; its first bulk write into the empty zone gives it its own.
            try await store.claimZone(zone, wait: false) { _ in }
            let records = (0..<10_000).map { number in
                Record(
                    recordType: "Note", recordName: "n\(number)", zoneID: zone,
                    fields: ["car": .reference(Reference(recordName: "n0", zoneID: zone, action: .deleteSelf))])
            }
            let creation = try await store.prepareCreation(Array(records[..<5000]), contents: records[..<5000].map(RecordContent.init), in: zone)
            #expect(try await store.createAbsent(creation)?.count == 5000)
            #expect(try await partitions() == ["records_shared": 1, "refs_shared": 0, records_: 5000, refs_: 0])
            let during = try await indexes()
            #expect(during.isDisjoint(with: secondary) && during.isSuperset(of: shared), "its indexes come at the end: \(during)")
            let rest = try await store.prepareCreation(Array(records[5000...]), contents: records[5000...].map(RecordContent.init), in: zone)
            #expect(try await store.createAbsent(rest)?.count == 5000)
            try await store.endBulkLoad()
            #expect(try await indexes().isSuperset(of: secondary.union(shared)))
            var analyzed: [String: Set<String>] = [:]
            try await database.query(PostgresQuery(unsafeSQL: "SELECT tablename, attname FROM pg_stats WHERE schemaname = '\(schema)'")) { row in
                let (table, column) = try row.decode((String, String).self)
                analyzed[table, default: []].insert(column)
            }
            #expect(analyzed[records_]?.isSuperset(of: ["zone", "name", "type", "seq", "deleted", "digest"]) == true)
            #expect(analyzed[records_]?.contains("fields") == false, "no query looks into the fields: no statistics of them")
            #expect(analyzed[refs_] == ["zone", "source", "target", "action"])
            // Both vacuumed: the records' pages all-visible, so that the feed's index answers digest comparisons alone
            // (which pages are depends on the transactions other tests hold open meanwhile), and nothing left to
            // autovacuum.
            var vacuumed: [String: Int64] = [:]
            try await database.query(
                PostgresQuery(unsafeSQL: "SELECT relname, vacuum_count FROM pg_stat_user_tables WHERE schemaname = '\(schema)'")
            ) { row in
                let (table, count) = try row.decode((String, Int64).self)
                vacuumed[table] = count
            }
            #expect(vacuumed[records_] == 1 && vacuumed[refs_] == 1, "\(vacuumed)")
            // A second load into the zone, no longer empty, goes into its partitions, indexed as they are.
            let more = [Record(recordType: "Note", recordName: "more", zoneID: zone)]
            #expect(try await store.createAbsent(try await store.prepareCreation(more, contents: more.map(RecordContent.init), in: zone))?.count == 1)
            #expect(try await partitions()[records_] == 10_001)
            // Deleting the zone drops its partitions once emptied.
            #expect(try await store.deleteZone(zone))
            #expect(try await partitions() == ["records_shared": 1, "refs_shared": 0])
            // A first write of a few records (a zone of the kind sharing makes many of) stays in the shared partitions.
            let small = ZoneID(zoneName: "Small")
            _ = try await store.createZone(small)
            try await store.claimZone(small, wait: false) { _ in }
            let few = (0..<10).map { Record(recordType: "Note", recordName: "f\($0)", zoneID: small) }
            #expect(try await store.createAbsent(few, contents: few.map(RecordContent.init), in: small)?.count == 10)
            try await store.endBulkLoad()
            #expect(try await partitions() == ["records_shared": 11, "refs_shared": 0])
        }
    }

    /// A zone's indexes dropped by a copy that was interrupted are built by the next copy that can claim the zone,
    /// and left alone while another copy holds it.
    @Test func indexesLeftDroppedByAnInterruptedLoadAreBuiltByTheNextCopyThatCanClaimTheZone() async throws {
        try await Self.withSchema { database, schema in
            let (interrupted, busy, next) = (
                PostgresRecordStore(try await PostgresDatabase.open(database.settings)),
                PostgresRecordStore(try await PostgresDatabase.open(database.settings)),
                PostgresRecordStore(try await PostgresDatabase.open(database.settings))
            )
            let zone = ZoneID(zoneName: "Cut")
            _ = try await interrupted.createZone(zone)
            let number = try await Self.zoneNumber(zone, database, schema)
            try await interrupted.claimZone(zone, wait: false) { _ in }
            let records = (0..<1000).map { Record(recordType: "Note", recordName: "n\($0)", zoneID: zone) }
            #expect(try await interrupted.createAbsent(records, contents: records.map(RecordContent.init), in: zone)?.count == 1000)
            // The copy ends without its endBulkLoad (its process killed): its claims' connection closes.
            try await interrupted.close()
            func feedIndexExists() async throws -> Bool {
                try await PostgresDatabaseTests.exists(PostgresSchema.secondaryIndexes(zone: number)[0].name, database, schema)
            }
            #expect(try await !feedIndexExists(), "built at the end of the load")
            // While another copy holds the zone, a copy that ends leaves them to it.
            try await busy.claimZone(zone, wait: false) { _ in }
            try await next.endBulkLoad()
            #expect(try await !feedIndexExists(), "left to the copy that holds the zone")
            try await busy.close()
            try await next.endBulkLoad()
            #expect(try await feedIndexExists(), "built by a copy that could claim the zone")
            // The claim it took for that is let go.
            let later = PostgresRecordStore(try await PostgresDatabase.open(database.settings))
            try await later.claimZone(zone, wait: false) { _ in }
            try await later.close()
            try await next.close()
        }
    }

    @Test func aBulkWriteFindsItsZoneMadeAgainByAnotherWriterAndNoneWhenItIsGone() async throws {
        try await Self.withSchema { database, _ in
            let (writer, other) = (PostgresRecordStore(database), PostgresRecordStore(database))
            let zone = ZoneID(zoneName: "Again")
            func bulk(_ name: String) async throws -> [RecordOutcome]? {
                let records = [Record(recordType: "Car", recordName: name, zoneID: zone, fields: ["n": .int64(1)])]
                return try await writer.createAbsent(try await writer.prepareCreation(records, contents: records.map(RecordContent.init), in: zone))
            }
            func saved(_ outcomes: [RecordOutcome]?) -> Bool { outcomes?.allSatisfy { if case .saved = $0 { true } else { false } } == true }
            _ = try await writer.createZone(zone)
            #expect(saved(try await bulk("r1")), "the writer now knows the zone's number")
            // Another writer deletes the zone and makes it again: a zone of another number, under the same name.
            #expect(try await other.deleteZone(zone))
            #expect(try await other.createZone(zone))
            #expect(saved(try await bulk("r2")))
            let names = try await other.lookup([RecordID(recordName: "r1", zoneID: zone), RecordID(recordName: "r2", zoneID: zone)]).keys
            #expect(Set(names.map(\.recordName)) == ["r2"], "r2 went into the zone as it is now")
            #expect(try await other.deleteZone(zone))
            let gone = try await bulk("r3")
            #expect(gone?.count == 1)
            if case .failed(_, let code, _, _)? = gone?.first { #expect(code == .zoneNotFound) } else { Issue.record("\(String(describing: gone))") }
        }
    }

    /// A store over `database` with a zone named `zone` holding a car of each name with `fields` (one INT64 field
    /// unless said), created.
    static func cars(
        _ names: [String], inZone zone: String, fields: RecordFields = ["n": .int64(1)], of database: FerryPostgres.PostgresDatabase
    ) async throws -> (PostgresRecordStore, ZoneID, [Record]) {
        let store = PostgresRecordStore(database)
        let zoneID = ZoneID(zoneName: zone)
        _ = try await store.createZone(zoneID)
        let records = names.map { Record(recordType: "Car", recordName: $0, zoneID: zoneID, fields: fields) }
        _ = try await store.modify(records.map { RecordOperation(.create, $0) }, in: zoneID, atomic: false)
        return (store, zoneID, records)
    }

    @Test func storedFieldsThatDoNotDecodeAreReportedWithTheirRecord() async throws {
        try await Self.withSchema { database, schema in
            let (store, zone, records) = try await Self.cars(["bad", "null"], inZone: "Damaged", of: database)
            for (name, fields) in [("bad", "'{\"n\": {\"type\": \"NOPE\", \"value\": 1}}'"), ("null", "NULL")] {
                try await database.execute(PostgresQuery(unsafeSQL: "UPDATE \(schema).records SET fields = \(fields) WHERE name = '\(name)'"))
                await #expect {
                    _ = try await store.changes(in: zone, since: nil, limit: 100)
                } throws: { error in
                    let error = error as? BackendError
                    return error?.code == .damaged && error?.message.contains("record \(name) in") == true
                        && error?.message.contains("verify the database") == true
                }
                if name == "bad" {
                    await #expect(throws: BackendError.self) { _ = try await store.fetch([records[0].id]) }
                }
                try await database.execute(PostgresQuery(unsafeSQL: "DELETE FROM \(schema).records WHERE name = '\(name)'"))
            }
        }
    }

    @Test func feedRowsGiveTimesAndTextsAsStoredWhetherReadAsRecordsOrAsLines() async throws {
        try await Self.withSchema { database, schema in
            let (store, zone, records) = try await Self.cars(["plain", "gone"], inZone: "InPlace", of: database)
            _ = try await store.modify([RecordOperation(.forceDelete, records[1])], in: zone, atomic: false)
            // Times written by hand with microseconds (rounded half away from zero, before 2000 too) and a name and type
            // that JSON must escape.
            try await database.execute(
                PostgresQuery(
                    unsafeSQL: """
                        UPDATE \(schema).records SET created = '2020-01-01 00:00:00.1235+00', modified = '1999-12-31 23:59:59.9994+00',
                        name = E'we"ird\\\\ é ☃', type = E'Ca\\tr' WHERE name = 'plain'
                        """))
            let page = try await store.changes(in: zone, since: nil, limit: 10)
            let lines = try await store.changeLines(in: zone, since: nil, limit: 10)
            guard case .record(let record)? = page.changes.first, case .line(let end)? = lines.entries.first else {
                Issue.record("\(page.changes) \(lines.entries)")
                return
            }
            #expect(record.recordName == "we\"ird\\ é ☃" && record.recordType == "Ca\tr")
            #expect(record.system?.created?.timestamp == 1_577_836_800_124 && record.system?.modified?.timestamp == 946_684_799_999)
            #expect(try CloudKitJSONDecoder().decode(bytes: Array(lines.bytes[..<end])) == .record(record), "a line is the record")
            #expect(page.changes.count == 2 && lines.entries.count == 2)
            if case .deletion(let deletion)? = lines.entries.last {
                #expect(deletion.recordName == "gone" && deletion.recordType == "Car" && deletion.zoneID == zone)
            } else {
                Issue.record("the tombstone: \(lines.entries)")
            }
        }
    }

    @Test func aBulkWriteFeedsItsRecordsInNameOrderUnlessAValidateTargetOfTheCallComesLater() async throws {
        try await Self.withSchema { database, schema in
            let store = PostgresRecordStore(database)
            func feed(_ zone: ZoneID) async throws -> [String] {
                try await store.changes(in: zone, since: nil, limit: 100).changes.map(\.recordName)
            }
            func tableOrder(_ zone: ZoneID) async throws -> [String] {
                let number = try await Self.zoneNumber(zone, database, schema)
                var names: [String] = []
                try await database.query(PostgresQuery(unsafeSQL: "SELECT name FROM \(schema).records WHERE zone = \(number) ORDER BY ctid")) {
                    names.append(try $0.decode(String.self))
                }
                return names
            }
            func write(_ records: [Record], in zone: ZoneID) async throws {
                let creation = try await store.prepareCreation(records, contents: records.map(RecordContent.init), in: zone)
                #expect(try await store.createAbsent(creation)?.allSatisfy { $0.errorCode == nil } == true)
            }
            // No VALIDATE reference within the call: the names' order, for the feed and for the table's pages alike.
            let plain = ZoneID(zoneName: "Plain")
            _ = try await store.createZone(plain)
            try await write(
                ["m", "c", "x", "a"].map { name in
                    Record(
                        recordType: "Note", recordName: name, zoneID: plain,
                        fields: ["car": .reference(Reference(recordName: "x", zoneID: plain, action: .deleteSelf))])
                }, in: plain)
            #expect(try await feed(plain) == ["a", "c", "m", "x"])
            #expect(try await tableOrder(plain) == ["a", "c", "m", "x"], "the feed reads the table's pages in order")
            // A VALIDATE target written later in the names' order than its referrer: the call's order, target first.
            let validated = ZoneID(zoneName: "Validated")
            _ = try await store.createZone(validated)
            let parent = Record(recordType: "Car", recordName: "z-parent", zoneID: validated)
            let child = Record(
                recordType: "Note", recordName: "a-child", zoneID: validated,
                fields: ["car": .reference(Reference(recordName: "z-parent", zoneID: validated, action: .validate))])
            try await write([parent, child, Record(recordType: "Car", recordName: "m-other", zoneID: validated)], in: validated)
            #expect(try await feed(validated) == ["z-parent", "a-child", "m-other"])
            #expect(try await tableOrder(validated) == ["z-parent", "a-child", "m-other"])
            // Read back into another zone page by page in that order, the child finds its parent.
            let again = ZoneID(zoneName: "Again")
            _ = try await store.createZone(again)
            let read = try await store.changes(in: validated, since: nil, limit: 100).changes.compactMap { change -> Record? in
                guard case .record(var record) = change else { return nil }
                record.zoneID = again
                record.system = nil
                if case .reference(var reference)? = record.fields["car"] {
                    reference.zoneID = again
                    record.fields["car"] = .reference(reference)
                }
                return record
            }
            try await write(read, in: again)
        }
    }

    @Test func aFeedColumnOfAnotherTypeIsReadWhenItsBinaryFormIsTheSameAndSaidWhenNot() async throws {
        try await Self.withSchema { database, schema in
            let (store, zone, _) = try await Self.cars(["one"], inZone: "Altered", of: database)
            let before = try await store.changes(in: zone, since: nil, limit: 10).changes
            try await database.execute(
                PostgresQuery(
                    unsafeSQL: "ALTER TABLE \(schema).records ALTER COLUMN tag TYPE varchar(64), ALTER COLUMN created TYPE timestamp"))
            #expect(try await store.changes(in: zone, since: nil, limit: 10).changes.map(\.recordName) == before.map(\.recordName))
            let line = try await store.changeLines(in: zone, since: nil, limit: 10)
            #expect(line.entries.count == 1)
            try await database.execute(
                PostgresQuery(unsafeSQL: "ALTER TABLE \(schema).records ALTER COLUMN deleted TYPE text USING deleted::text"))
            for read in [
                { _ = try await store.changes(in: zone, since: nil, limit: 10) },
                { _ = try await store.changeLines(in: zone, since: nil, limit: 10) },
            ] as [@Sendable () async throws -> Void] {
                await #expect {
                    try await read()
                } throws: { error in
                    let error = error as? BackendError
                    return error?.code == .damaged && error?.message.contains("column deleted holds TEXT") == true
                        && error?.message.contains("changed outside Ferry") == true
                }
            }
        }
    }

    @Test func aSnapshotSeesTheDatabaseAsItWasWhenTaken() async throws {
        try await Self.withSchema { database, schema in
            let (store, zone, cars) = try await Self.cars(["c1"], inZone: "Snap", fields: ["name": .string("before")], of: database)
            let first = cars[0]
            let snapshot = try await store.snapshot()
            let zonesThen = try await snapshot.zones()
            // Written after the snapshot was taken: a new record, a change, a new zone.
            let second = Record(recordType: "Car", recordName: "c2", zoneID: zone, fields: ["name": .string("after")])
            var changed = first
            changed.fields["name"] = .string("changed")
            _ = try await store.modify([RecordOperation(.create, second), RecordOperation(.forceReplace, changed)], in: zone, atomic: false)
            _ = try await store.createZone(ZoneID(zoneName: "Later"))
            #expect(try await snapshot.zones().map(\.syncToken) == zonesThen.map(\.syncToken))
            // Reads other than the feed's pages run on a second connection in the same snapshot.
            let fetched = try await snapshot.fetch([first.id, second.id])
            #expect(fetched[first.id]?.fields["name"] == .string("before") && fetched[second.id] == nil)
            let page = try await snapshot.changes(in: zone, since: nil, limit: 10)
            #expect(page.changes.map(\.recordName) == ["c1"])
            if case .record(let seen) = page.changes.first { #expect(seen.fields["name"] == .string("before")) }
            #expect(try await store.changes(in: zone, since: nil, limit: 10).changes.count == 2, "the database itself has both")
            await #expect(throws: PostgresBackendError.self) {
                _ = try await snapshot.modify([RecordOperation(.create, second)], in: zone, atomic: false)
            }
            try await snapshot.close()
            #expect(try await store.zones().count == 3, "closing the snapshot leaves the database open")
        }
    }

    @Test func aSnapshotSharesItsViewWithASecondConnectionOrReadsOnOneWhereASecondIsRefused() async throws {
        try await Self.withSchema { database, schema in
            let (owner, zone, cars) = try await Self.cars(["c1"], inZone: "Shared", fields: ["name": .string("before")], of: database)
            let first = cars[0]
            try await Self.withRole(database, schema) { role in
                ["GRANT USAGE ON SCHEMA \(schema) TO \(role)", "GRANT SELECT ON ALL TABLES IN SCHEMA \(schema) TO \(role)"]
            } _: { settings in
                let role = settings.user
                // The role's sessions in a transaction, and how many distinct snapshots they hold.
                func sessions() async throws -> (inTransaction: Int, snapshots: Int) {
                    var found = (0, 0)
                    try await database.query(
                        PostgresQuery(
                            unsafeSQL: """
                                SELECT count(*), count(DISTINCT backend_xmin::text) FROM pg_stat_activity
                                WHERE usename = '\(role)' AND state LIKE 'idle in transaction%'
                                """)
                    ) { row in
                        let (count, snapshots) = try row.decode((Int64, Int64).self)
                        found = (Int(count), Int(snapshots))
                    }
                    return found
                }
                let reader = PostgresRecordStore(try await PostgresDatabase.open(settings))
                _ = try await reader.zones()
                var changed = first
                for (round, refused) in [false, true].enumerated() {
                    if refused {
                        // As many connections as the role holds now and one more: the snapshot's first, not its second.
                        var open = 0
                        try await database.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM pg_stat_activity WHERE usename = '\(role)'")) {
                            open = Int(try $0.decode(Int64.self))
                        }
                        try await database.execute(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) CONNECTION LIMIT \(open + 1)"))
                    }
                    let seen = changed.fields["name"]
                    let snapshot = try await reader.snapshot()
                    let held = try await sessions()
                    #expect(held.inTransaction == (refused ? 1 : 2) && held.snapshots == 1, "round \(round): \(held)")
                    changed.fields["name"] = .string("after \(round)")
                    _ = try await owner.modify([RecordOperation(.forceReplace, changed)], in: zone, atomic: false)
                    #expect(try await snapshot.fetch([first.id])[first.id]?.fields["name"] == seen, "round \(round)")
                    let page = try await snapshot.changes(in: zone, since: nil, limit: 10)
                    if case .record(let record)? = page.changes.first { #expect(record.fields["name"] == seen) } else { Issue.record("\(page)") }
                    try await snapshot.close()
                }
                try await reader.close()
            }
        }
    }

    @Test func aSnapshotPagesTheFeedAsTheDatabaseDoesWhateverOrderPagesAreAskedIn() async throws {
        try await Self.withSchema { database, schema in
            let store = PostgresRecordStore(database)
            let zone = ZoneID(zoneName: "Pages")
            _ = try await store.createZone(zone)
            // 1 200 records (more than a page decoded in two parts), then one deleted: a tombstone in the feed.
            let records = (0..<1_200).map { Record(recordType: "Note", recordName: "n\($0)", zoneID: zone, fields: ["i": .int64(Int64($0))]) }
            _ = try await store.modify(records.map { RecordOperation(.create, $0) }, in: zone, atomic: false)
            _ = try await store.modify(
                [RecordOperation.delete(Deletion(recordType: "Note", recordName: "n7", zoneID: zone))], in: zone, atomic: false)
            func pages(_ reader: any RecordStore, limit: Int) async throws -> (names: [String], tokens: [SyncToken]) {
                var names: [String] = []
                var tokens: [SyncToken] = []
                var token: SyncToken?
                while true {
                    let page = try await reader.changes(in: zone, since: token, limit: limit)
                    names += page.changes.map(\.recordName)
                    tokens.append(page.syncToken)
                    token = page.syncToken
                    if !page.moreComing { break }
                }
                return (names, tokens)
            }
            let snapshot = try await store.snapshot()
            let expected = try await pages(store, limit: 700)
            #expect(expected.names.count == 1_200)
            // Read ahead page by page, and the same page asked again or out of turn: the database's pages each time.
            #expect(try await pages(snapshot, limit: 700) == expected)
            #expect(try await pages(snapshot, limit: 700) == expected)
            let again = try await snapshot.changes(in: zone, since: expected.tokens[0], limit: 700)
            #expect(again.changes.map(\.recordName) == Array(expected.names.suffix(from: 700)))
            #expect(try await pages(snapshot, limit: 99).names == expected.names)
            try await snapshot.close()
        }
    }

    @Test func anUnreachableServerIsNamedAndTheCredentialsAreChecked() async throws {
        guard let url = try Self.serverURL() else { return }
        // A port nobody listens on: 69, naming it.
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: "postgres://ferry@127.0.0.1:1/ferry_test?sslmode=disable"))
        } throws: { error in
            guard let error = error as? PostgresBackendError else { return false }
            return error.code == .unavailable && error.kind == .unavailable && error.message.contains("cannot connect to 127.0.0.1 port 1")
        }
        // A role with a password, given the wrong one: 77, and the password appears nowhere.
        let admin = try await PostgresDatabase.open(try Self.settings(url, schema: "public"))
        let role = "r_\(UInt32.random(in: 0...UInt32.max))"
        try await admin.execute("CREATE ROLE \(unescaped: role) LOGIN PASSWORD 'right-password'")
        let host = try #require(URLComponents(string: url)?.host)
        let port = try #require(URLComponents(string: url)?.port)
        let wrong = "wrong-\(UInt32.random(in: 0...UInt32.max))"
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: "postgres://\(role):\(wrong)@\(host):\(port)/ferry_test?sslmode=disable"))
        } throws: { error in
            guard let error = error as? PostgresBackendError else { return false }
            return error.code == .authentication && error.kind == .permission && !error.message.contains(wrong)
                && !"\(error)".contains(wrong)
        }
        let right = try await PostgresDatabase.open(
            try PostgresSettings(url: "postgres://\(role):right-password@\(host):\(port)/ferry_test?sslmode=disable"))
        await right.close()
        // A database that is not there.
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: "postgres://ferry@\(host):\(port)/no_such_db?sslmode=disable"))
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("create it (createdb no_such_db)") == true
        }
        try await admin.execute("DROP ROLE \(unescaped: role)")
        await admin.close()
    }

    /// Session settings a role or database may set that would change what Ferry's statements mean do not reach Ferry's
    /// sessions: text is sent and read as UTF-8 whatever `client_encoding` the role has (a role's LATIN1 turned every
    /// non-ASCII character into two, silently), writes are read committed, string literals standard; and timeouts set
    /// for an application's queries do not cut Ferry's statements short (as they do not pg_dump's): a COPY, an index
    /// build, a wait for another copy's zone, a snapshot held while a bundle is written.
    @Test func aRolesSessionSettingsDoNotChangeWhatFerryWritesOrReads() async throws {
        try await Self.withSchema { database, schema in
            let settings = [
                ("client_encoding", "LATIN1", "UTF8"), ("default_transaction_isolation", "serializable", "read committed"),
                ("standard_conforming_strings", "off", "on"), ("statement_timeout", "1ms", "0"), ("lock_timeout", "1ms", "0"),
                ("idle_in_transaction_session_timeout", "1ms", "0"),
            ]
            try await Self.withRole(database, schema) { role in
                settings.map { "ALTER ROLE \(role) SET \($0.0) = '\($0.1)'" } + [
                    "GRANT USAGE ON SCHEMA \(schema) TO \(role)", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(role)",
                    "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA \(schema) TO \(role)",
                ]
            } _: { roleSettings in
                var named = roleSettings
                named.applicationName = "nightly backup"
                let ferry = try await PostgresDatabase.open(named)
                #expect(try await ferry.rows("SHOW application_name").first?.decode(String.self) == "nightly backup")
                try await ferry.execute("SELECT pg_sleep(0.05)")
                for (name, _, expected) in settings {
                    #expect(try await ferry.rows(PostgresQuery(unsafeSQL: "SHOW \(name)")).first?.decode(String.self) == expected, "\(name)")
                }
                let zone = ZoneID(zoneName: "Café")
                let text = "café crème ✓ 🚗"
                let store = PostgresRecordStore(ferry)
                _ = try await store.createZone(zone)
                let record = Record(recordType: "Car", recordName: "c-é", zoneID: zone, fields: ["name": .string(text)])
                let outcomes = try await store.modify([RecordOperation(.forceReplace, record)], in: zone, atomic: true)
                guard case .saved = try #require(outcomes.first) else {
                    Issue.record("not saved: \(outcomes)")
                    await ferry.close()
                    return
                }
                // As the owner's session (UTF8) reads it, and as Ferry reads it back.
                let stored = try await database.rows(
                    PostgresQuery(unsafeSQL: "SELECT fields->'name'->>'value' FROM \(schema).records WHERE name = 'c-é'")
                ).first?.decode(String.self)
                #expect(stored == text)
                let page = try await store.changes(in: zone, since: nil, limit: 10)
                #expect(page.changes.compactMap { if case .record(let read) = $0 { read } else { nil } }.first?.fields["name"] == .string(text))
                await ferry.close()
            }
        }
    }

    /// Through a pooler that takes only a few parameters at startup, as PgBouncer does: Ferry connects without its
    /// session settings (text still UTF-8) and says what that means, rather than failing to connect.
    @Test func aPoolerThatRefusesSessionSettingsIsConnectedThroughAndSaid() async throws {
        guard let url = try Self.serverURL() else { return }
        var components = try #require(URLComponents(string: url))
        let relay = try TCPRelay(to: "127.0.0.1", port: try #require(components.port))
        defer { relay.stop() }
        relay.acceptStartupParameters(["application_name", "client_encoding", "standard_conforming_strings", "DateStyle", "TimeZone"])
        components.port = relay.port
        let pooled = try #require(components.string)
        let database = try await PostgresDatabase.open(try PostgresSettings(url: pooled + "?sslmode=disable"))
        #expect(database.warnings.count == 1)
        #expect(
            database.warnings.first?.contains("unsupported startup parameter") == true
                && database.warnings.first?.contains("ignore_startup_parameters") == true, "\(database.warnings)")
        #expect(try await database.rows("SHOW client_encoding").first?.decode(String.self) == "UTF8")
        #expect(try await database.rows("SELECT 1").first?.decode(Int.self) == 1, "the pool's connections get through too")
        await database.close()
        // Straight to the server: no warning.
        let direct = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=disable"))
        #expect(direct.warnings.isEmpty)
        await direct.close()
    }

    /// A server without a connection to spare (max_connections, a role's connection limit) is a temporary failure (75)
    /// that says what to do; one that takes no writes (a standby, default_transaction_read_only) is a configuration
    /// error (78) that says so.
    @Test func aServerWithoutRoomOrWithoutWritesSaysWhatToDo() async throws {
        try await Self.withSchema { database, schema in
            try await Self.withRole(database, schema) { role in
                ["ALTER ROLE \(role) CONNECTION LIMIT 0"]
            } _: { settings in
                await #expect {
                    _ = try await PostgresDatabase.open(settings)
                } throws: { error in
                    guard let error = error as? PostgresBackendError else { return false }
                    return error.code == .resources && error.kind == .temporary && error.message.contains("lower --parallel")
                        && error.message.contains("run the same command again")
                }
            }
            try await Self.withRole(database, schema) { role in
                [
                    "ALTER ROLE \(role) SET default_transaction_read_only = on", "GRANT USAGE ON SCHEMA \(schema) TO \(role)",
                    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(role)",
                ]
            } _: { settings in
                let reader = try await PostgresDatabase.open(settings)
                let zone = ZoneID(zoneName: "Standby")
                await #expect {
                    _ = try await PostgresRecordStore(reader).createZone(zone)
                } throws: { error in
                    guard let error = error as? PostgresBackendError else { return false }
                    return error.code == .readOnly && error.kind == .config && error.message.contains("takes no writes")
                        && error.message.contains("copy into the primary")
                }
                await reader.close()
            }
        }
    }

    @Test func aSchemaHasAnIdentityUnlessTheWritingRoleMayNotGiveIt() async throws {
        try await Self.withSchema { database, schema in
            let store = PostgresRecordStore(database)
            let given = try #require(try await store.feedIdentity())
            try await PostgresSchema.migrate(database)
            #expect(try await store.feedIdentity() == given, "kept from one run to the next")
            // A role that writes what a copy writes, but not ferry_meta: the schema stays without an identity.
            try await database.execute(PostgresQuery(unsafeSQL: "DELETE FROM \(schema).ferry_meta WHERE key = 'store_id'"))
            try await Self.withRole(database, schema) { role in
                [
                    "GRANT USAGE ON SCHEMA \(schema) TO \(role)", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(role)",
                    "REVOKE INSERT, UPDATE, DELETE ON \(schema).ferry_meta FROM \(role)",
                ]
            } _: { settings in
                let writer = try await PostgresDatabase.open(settings)
                try await PostgresSchema.migrate(writer)
                #expect(try await PostgresRecordStore(writer).feedIdentity() == nil)
                await writer.close()
            }
        }
    }

    /// A role granted the tables but not `CREATE` on the schema loads a new zone into the shared partitions, and writes
    /// in bulk into a zone whose partitions another role made (through the parent tables).
    @Test func aRoleGrantedOnlyTheTablesLoadsZonesAllTheSame() async throws {
        try await Self.withSchema { database, schema in
            // The owner's copy, with a pool of its own (closing it lets go of its claims).
            let owner = PostgresRecordStore(try await PostgresDatabase.open(database.settings))
            let reader = PostgresRecordStore(database)
            try await Self.withRole(database, schema) { role in
                [
                    "GRANT USAGE ON SCHEMA \(schema) TO \(role)", "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(role)",
                    "GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(schema) TO \(role)",
                ]
            } _: { settings in
                // The owner's first copy into a zone gives it partitions of its own, after the grant: the owner's alone.
                let owned = ZoneID(zoneName: "Owned")
                #expect(try await owner.createZone(owned))
                try await owner.claimZone(owned, wait: false) { _ in }
                let first = (0..<1000).map { Record(recordType: "Note", recordName: "first\($0)", zoneID: owned) }
                #expect(try await owner.createAbsent(first, contents: first.map(RecordContent.init), in: owned)?.count == 1000)
                try await owner.endBulkLoad()
                try await owner.close()
                let writer = PostgresRecordStore(try await PostgresDatabase.open(settings))
                let mine = ZoneID(zoneName: "Mine")
                #expect(try await writer.createZone(mine))
                for zone in [owned, mine] {
                    try await writer.claimZone(zone, wait: false) { _ in }
                    let records = (0..<100).map { Record(recordType: "Note", recordName: "n\($0)", zoneID: zone) }
                    let outcomes = try #require(try await writer.createAbsent(records, contents: records.map(RecordContent.init), in: zone))
                    #expect(outcomes.allSatisfy { if case .saved = $0 { true } else { false } })
                    #expect(try await reader.lookup(records.map(\.id)).count == 100)
                }
                try await writer.endBulkLoad()
                let number = try await Self.zoneNumber(mine, database, schema)
                #expect(
                    try await !Self.exists(PostgresSchema.partitionName("records", zone: number), database, schema),
                    "a role without CREATE on the schema loads into the shared partitions")
                try await writer.close()
            }
        }
    }

    /// A role the server lets in by client certificate alone (`cert` in pg_hba.conf): in with `sslcert` and `sslkey`,
    /// refused without them (77), and a key others can read is refused before connecting, as libpq refuses it.
    @Test func aClientCertificateLetsInARoleThatNeedsOne() async throws {
        guard let url = try Self.serverURL() else { return }
        let environment = ProcessInfo.processInfo.environment
        guard let certificate = environment["FERRY_TEST_PG_CLIENT_CERT"], let key = environment["FERRY_TEST_PG_CLIENT_KEY"] else {
            if TestEnvironment.isCI { throw TestEnvironment.PostgresServerMissing() }
            print("skipped: no FERRY_TEST_PG_CLIENT_CERT (Scripts/test's server lets ferry_cert in by a certificate it makes)")
            return
        }
        let admin = try await PostgresDatabase.open(try Self.settings(url, schema: "public"))
        try await admin.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ferry_cert') THEN CREATE ROLE ferry_cert LOGIN; END IF; END $$")
        var components = try #require(URLComponents(string: url))
        components.user = "ferry_cert"
        let base = try #require(components.string)
        let withCertificate = try await PostgresDatabase.open(
            try PostgresSettings(url: base + "?sslmode=require&sslcert=\(certificate)&sslkey=\(key)"))
        #expect(try await withCertificate.rows("SELECT current_user").first?.decode(String.self) == "ferry_cert")
        await withCertificate.close()
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: base + "?sslmode=require", environment: [:]))
        } throws: { error in
            (error as? PostgresBackendError)?.kind == .permission && (error as? PostgresBackendError)?.message.contains("sslcert=PATH") == true
        }
        let scratch = try Scratch()
        let open = scratch.file("open.key")
        try FileManager.default.copyItem(atPath: key, toPath: open)
        chmod(open, 0o644)
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: base + "?sslmode=require&sslcert=\(certificate)&sslkey=\(open)"))
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("can be read by others than its owner (mode 644); chmod 0600") == true
        }
        await admin.close()
    }

    @Test func tlsIsUsedAndTheCertificateCheckedAsAsked() async throws {
        guard let url = try Self.serverURL() else { return }
        guard let root = ProcessInfo.processInfo.environment["FERRY_TEST_PG_CA"] else {
            if TestEnvironment.isCI { throw TestEnvironment.PostgresServerMissing() }
            print("skipped: no FERRY_TEST_PG_CA (Scripts/test's server has TLS with a certificate it makes)")
            return
        }
        let required = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=require"))
        await required.close()
        let verified = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=verify-full&sslrootcert=\(root)"))
        await verified.close()
        // Through 127.0.0.2, which the certificate (for 127.0.0.1) does not name: verify-ca checks the root alone,
        // verify-full the address too.
        var components = try #require(URLComponents(string: url))
        let relay = try TCPRelay(to: "127.0.0.1", port: try #require(components.port), listeningOn: "127.0.0.2")
        defer { relay.stop() }
        components.host = "127.0.0.2"
        components.port = relay.port
        let byName = try #require(components.string)
        let rootOnly = try await PostgresDatabase.open(try PostgresSettings(url: byName + "?sslmode=verify-ca&sslrootcert=\(root)"))
        await rootOnly.close()
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: byName + "?sslmode=verify-full&sslrootcert=\(root)"))
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("TLS with the server failed (sslmode=verify-full") == true
        }
        // Another certificate as the root: the server's is not trusted.
        let scratch = try Scratch()
        let made = try ProcessResult.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-keyout", scratch.file("other.key"),
                "-out", scratch.file("other.crt"),
            ])
        #expect(made.status == 0, "\(made.errors)")
        await #expect {
            _ = try await PostgresDatabase.open(try PostgresSettings(url: url + "?sslmode=verify-full&sslrootcert=\(scratch.file("other.crt"))"))
        } throws: { error in
            (error as? PostgresBackendError)?.message.contains("TLS with the server failed (sslmode=verify-full") == true
        }
    }
}

/// Writers of one zone at the same time, on the real server.
@Suite struct PostgresConcurrentWriterTests {
    /// A copy whose claims' connection was lost while it loaded a zone with its indexes dropped stops when another copy
    /// took the zone meanwhile, and leaves the indexes to that copy.
    @Test func aZoneClaimLostWithItsConnectionLeavesTheIndexesToTheCopyThatTookIt() async throws {
        try await PostgresDatabaseTests.withSchema { database, schema in
            // Two copies, each with a connection pool of its own (closing a store closes its pool).
            let first = PostgresRecordStore(try await PostgresDatabase.open(database.settings))
            let second = PostgresRecordStore(try await PostgresDatabase.open(database.settings))
            let zone = ZoneID(zoneName: "CarZone")
            #expect(try await first.createZone(zone))
            let number = try await PostgresDatabaseTests.zoneNumber(zone, database, schema)
            try await first.claimZone(zone, wait: false) { _ in }
            let records = (0..<1000).map { Record(recordType: "Car", recordName: "c\($0)", zoneID: zone) }
            #expect(try await first.createAbsent(records, contents: records.map(RecordContent.init), in: zone)?.count == 1000)
            func feedIndexExists() async throws -> Bool {
                try await PostgresDatabaseTests.exists(PostgresSchema.secondaryIndexes(zone: number)[0].name, database, schema)
            }
            #expect(try await !feedIndexExists(), "an empty zone: the first copy builds its indexes at its end")
            // The server ends the connection holding the claim, as when the network drops it.
            try await database.execute(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
                          AND objid = \(number) AND classid = (hashtext('\(schema).copy')::bigint & 4294967295)::oid
                        """))
            // The claim is free: the second copy takes it (once the server has ended the first's session).
            var attempts = 0
            while true {
                do {
                    try await second.claimZone(zone, wait: false) { _ in }
                    break
                } catch {
                    attempts += 1
                    if attempts == 50 { throw error }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            // The first copy's next claim finds its connection gone and the zone taken: it stops, to be run again.
            await #expect {
                try await first.claimZone(ZoneID(zoneName: "Another"), wait: false) { _ in }
                _ = try await first.createZone(ZoneID(zoneName: "Another"))
                try await first.claimZone(ZoneID(zoneName: "Another"), wait: false) { _ in }
            } throws: { error in
                (error as? PostgresBackendError)?.code == .interrupted
            }
            await #expect(throws: PostgresBackendError.self, "nor does it build the indexes at its end") { try await first.endBulkLoad() }
            #expect(try await feedIndexExists() == false, "left to the copy that holds the zone now")
            try await second.endBulkLoad()
            #expect(try await feedIndexExists(), "built by the copy that holds the zone")
            try await second.close()
            try await first.close()
        }
    }

    @Test func writersOfTheSameRecordsTakeTurnsWithoutDeadlock() async throws {
        try await PostgresDatabaseTests.withSchema { database, _ in
            let store = PostgresRecordStore(database)
            let zone = ZoneID(zoneName: "Shared")
            _ = try await store.createZone(zone)
            func records(_ writer: Int) -> [RecordOperation] {
                // Both writers name the same records, in opposite orders.
                let names = (0..<40).map { "Item.\($0)" }
                return (writer == 0 ? names : names.reversed()).map {
                    RecordOperation(
                        .forceReplace, Record(recordType: "Item", recordName: $0, zoneID: zone, fields: ["writer": .int64(Int64(writer))]))
                }
            }
            // The records exist first: a writer then locks the rows it reads, which is where two writers could wait for each other.
            _ = try await store.modify(records(0), in: zone, atomic: false)
            let outcomes = try await withThrowingTaskGroup(of: [RecordOutcome].self) { group in
                for writer in 0..<4 { group.addTask { try await store.modify(records(writer % 2), in: zone, atomic: false) } }
                var all: [RecordOutcome] = []
                for try await outcome in group { all += outcome }
                return all
            }
            #expect(outcomes.count == 160 && outcomes.allSatisfy { $0.errorCode == nil })
            let page = try await store.changes(in: zone, since: nil, limit: 1000)
            #expect(page.changes.count == 40, "each record once, in its latest state")
        }
    }
}
