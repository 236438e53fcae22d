import FerryBackend
import FerryCore
import FerryRecords
import Foundation
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresRecordStore: CheckpointedBulkCreating {
    /// Checks what can be checked of records alone (a name, the zone, references within it, no `\u0000`), puts them
    /// in the order of their change sequences and encodes their rows as far as their write does not change them, ahead
    /// of the write.
    public func prepareCreation(_ records: [Record], contents: [RecordContent], in zone: ZoneID) async throws -> BulkCreation {
        let prepared = records.count == contents.count ? preparedRows(records, contents: contents, zone: zone) : nil
        return BulkCreation(records: records, contents: contents, zone: zone, prepared: prepared)
    }

    /// The checks of records alone, the order of their change sequences, each one's row of `records` up to its zone,
    /// times and change sequence (which the write adds), and its DELETE_SELF targets.
    private func preparedRows(_ records: [Record], contents: [RecordContent], zone: ZoneID) -> PreparedRows {
        var refusals = [RecordOutcome?](repeating: nil, count: records.count)
        var validated: Set<String> = []
        var deleteSelf = [[String]](repeating: [], count: records.count)
        // Read where they lie: a copy of each record (all of its strings and arrays retained, then released) was a
        // good part of preparing a round.
        records.withUnsafeBufferPointer { records in
            for index in records.indices {
                refusals[index] = refusal(of: records[index], content: contents[index], zone: zone)
                var targets: Set<String> = []
                records[index].fields.forEachReference { _, reference in
                    switch reference.action {
                    case .validate: validated.insert(reference.recordName)
                    case .deleteSelf: targets.insert(reference.recordName)
                    default: break
                    }
                }
                if !targets.isEmpty { deleteSelf[index] = targets.sorted() }
            }
        }
        // The rows go to the table in the order of their change sequences, so that the change feed, which is read in
        // that order, reads the table's pages in order too (a feed read out of order visits a page for every row).
        // That order is the names' where it may be: the primary key's pages are then visited in order, once each,
        // rather than at random (String's own comparison, a byte comparison for ASCII names, will do). It may not
        // when a record has a VALIDATE reference to another of the call: the target must come first in the feed, as
        // in the call, for a copy of the feed to write it first.
        let names = records.map(\.recordName)
        let order =
            validated.isDisjoint(with: names) ? records.indices.sorted { names[$0] < names[$1] } : Array(records.indices)
        var bodies = CopyRows(capacity: contents.reduce(0) { $0 + $1.fieldsRange.count + 120 })
        var ends = [Int](repeating: 0, count: records.count)
        let columns = Int16(CopyRows.recordColumns(stamped: sendsStamps).count)
        for index in order where refusals[index] == nil {
            bodies.recordBody(record: records[index], content: contents[index], columns: columns)
            ends[index] = bodies.count
        }
        return PreparedRows(
            refusals: refusals, validated: validated, names: names, order: order, bodies: bodies.take(), ends: ends, deleteSelf: deleteSelf)
    }

    /// Writes records absent from the zone through `COPY … FROM STDIN`, in one transaction: the outcomes of `modify`
    /// with `.forceReplace` of each, at PostgreSQL's bulk-load speed.
    ///
    /// Each record is checked as `modify` checks it (see ``prepareCreation(_:contents:in:)``; VALIDATE targets live in
    /// the zone or written earlier in the call), and the ones that pass are streamed to the server in COPY's binary
    /// format with their change sequences, then their DELETE_SELF references. When the zone holds one of the records
    /// (a unique violation) or the server refuses one, the transaction is rolled back and the answer is `nil`:
    /// `modify` then says which record it was.
    public func createAbsent(_ creation: BulkCreation) async throws -> [RecordOutcome]? {
        guard creation.records.count == creation.contents.count else {
            return try await modify(creation.records.map { RecordOperation(.forceReplace, $0) }, in: creation.zone, atomic: false)
        }
        guard let (written, _) = try await bulkWrite(creation, recording: nil) else { return nil }
        // Made after the commit: the saved records (each with its tag and times) are the caller's, not the server's, time.
        return written.outcomes(of: creation.records, zone: creation.zone)
    }

    public func createAbsent(_ creation: BulkCreation, recording checkpoint: CopyCheckpoint, run: String, source: String) async throws
        -> (refusals: [RecordOutcome?], recorded: Bool)?
    {
        guard creation.records.count == creation.contents.count else {
            // Not written in bulk (see createAbsent(_:)), so with no checkpoint.
            return try await createAbsent(creation).map { outcomes in (outcomes.map { if case .saved = $0 { nil } else { $0 } }, false) }
        }
        guard let (written, recorded) = try await bulkWrite(creation, recording: (checkpoint, run, source)) else { return nil }
        return (written.refusals(zone: creation.zone), recorded)
    }

    /// A bulk write in one transaction, with a copy's checkpoint when one is given and every record was saved.
    private func bulkWrite(_ creation: BulkCreation, recording checkpoint: (CopyCheckpoint, run: String, source: String)?) async throws
        -> (BulkWritten, recorded: Bool)?
    {
        try writable()
        let (records, contents, zone) = (creation.records, creation.contents, creation.zone)
        let prepared = creation.prepared as? PreparedRows ?? preparedRows(records, contents: contents, zone: zone)
        try await prepareFirstLoad(zone, writing: records.count)
        do {
            return try await database.transaction { [self] connection -> (BulkWritten, recorded: Bool) in
                let written = try await bulkRows(records, prepared: prepared, zone: zone, on: connection)
                guard let (checkpoint, run, source) = checkpoint, written.savedAll else { return (written, false) }
                try await connection.query(try journalUpsert(run: run, source: source, checkpoint), logger: logger)
                return (written, true)
            }
        } catch let error as PostgresBackendError where error.sqlState == "23505" || error.refusesData {
            return nil
        }
    }

    /// Writes a bulk write's rows in the caller's transaction: which records were refused, and where the others went.
    private func bulkRows(_ records: [Record], prepared: PreparedRows, zone: ZoneID, on connection: PostgresConnection) async throws
        -> BulkWritten
    {
        // Change sequences for every record not refused already; ones a VALIDATE check refuses leave a gap.
        let candidates = prepared.refusals.count { $0 == nil }
        guard let (number, last, now) = try await lockedZoneReserving(zone, sequences: candidates, on: connection) else {
            var seen: Set<String> = []
            let refused = records.map { record in
                RecordOperation(.forceReplace, record).requestProblem(zone: zone, zoneExists: false, seen: &seen)
                    ?? .failed(record.id, .zoneNotFound, reason: "zone \(zone) does not exist; create it first")
            }
            return BulkWritten(refused: refused, offsets: Array(repeating: -1, count: records.count), first: 0, now: 0)
        }
        var outcomes = prepared.refusals
        if !prepared.validated.isEmpty {
            // A VALIDATE target must be live in the zone or written earlier in the call.
            let existing = try await liveNames(prepared.validated, zone: number, on: connection)
            var written: Set<String> = []
            for index in records.indices where outcomes[index] == nil {
                if let refusal = validateRefusal(of: records[index], written: written, existing: existing) {
                    outcomes[index] = refusal
                } else {
                    written.insert(records[index].recordName)
                }
            }
        }
        // Each accepted record's place among the accepted ones in the prepared order: its change sequence is the first
        // one's plus it.
        var offsets = [Int](repeating: -1, count: records.count)
        var accepted = 0
        for index in prepared.order where outcomes[index] == nil {
            offsets[index] = accepted
            accepted += 1
        }
        guard accepted > 0 else { return BulkWritten(refused: outcomes, offsets: offsets, first: 0, now: now) }
        let first = last - Int64(candidates) + 1
        let suffix = CopyRows.suffix(zone: number, stamp: sendsStamps ? now : nil)
        // Into the zone's partition itself where this role may write it (COPY into the parent table looks up each row's
        // partition).
        let place = bulkLoads.withLock { $0[number]?.place } ?? .parent
        try await connection.copyFrom(
            table: place.table("records", zone: number), columns: CopyRows.binary(CopyRows.recordColumns(stamped: sendsStamps)), logger: logger
        ) { writer in
            var rows = CopyRows.started()
            var start = 0
            for index in prepared.order where prepared.refusals[index] == nil {
                defer { start = prepared.ends[index] }
                guard offsets[index] >= 0 else { continue }
                rows.recordRow(bodies: prepared.bodies, range: start..<prepared.ends[index], suffix: suffix, sequence: first + Int64(offsets[index]))
                if rows.isFull { try await writer.write(rows.take()) }
            }
            rows.end()
            try await writer.write(rows.take())
        }
        // The written records' DELETE_SELF references, read where they are (a list of pairs made first retained and
        // released both names of every reference twice).
        let referencing = records.indices.filter { offsets[$0] >= 0 && !prepared.deleteSelf[$0].isEmpty }
        if !referencing.isEmpty {
            try await connection.copyFrom(
                table: place.table("refs", zone: number), columns: CopyRows.binary(["zone", "source", "target", "action"]), logger: logger
            ) {
                writer in
                var rows = CopyRows.started()
                for index in referencing {
                    for target in prepared.deleteSelf[index] { rows.referenceRow(zone: number, source: prepared.names[index], target: target) }
                    if rows.isFull { try await writer.write(rows.take()) }
                }
                rows.end()
                try await writer.write(rows.take())
            }
        }
        bulkLoads.withLock { $0[number, default: ZoneLoad()].written += accepted }
        return BulkWritten(refused: outcomes, offsets: offsets, first: first, now: now)
    }

    /// Why `modify` would refuse a record of a bulk write whatever the zone holds, `nil` when nothing does.
    private func refusal(of record: Record, content: RecordContent, zone: ZoneID) -> RecordOutcome? {
        guard !record.recordName.isEmpty else { return .failed(record.id, .badRequest, reason: "the record has no name") }
        guard record.zoneID == zone else {
            return .failed(record.id, .badRequest, reason: "the record belongs to zone \(record.zoneID), not \(zone)")
        }
        var crossing: (field: String, zone: ZoneID)?
        record.fields.forEachReference { field, reference in
            if crossing == nil, reference.zoneID != record.zoneID { crossing = (field, reference.zoneID) }
        }
        if let crossing {
            return .failed(record.id, .badRequest, reason: "\(crossing.field) points into zone \(crossing.zone); a reference cannot cross zones")
        }
        guard !content.body.containsEscapedNUL else {
            return .failed(record.id, .badRequest, reason: "a string holds \\u0000, which PostgreSQL's jsonb cannot store")
        }
        return nil
    }

    /// Why `modify` would refuse a record for a VALIDATE reference to a record neither live in the zone nor written
    /// earlier in the call.
    private func validateRefusal(of record: Record, written: Set<String>, existing: Set<String>) -> RecordOutcome? {
        for field in record.fields {
            for reference in field.value.references
            where reference.action == .validate && !written.contains(reference.recordName) && !existing.contains(reference.recordName) {
                return .failed(
                    record.id, .validatingReferenceError,
                    reason: "\(field.name) must point at an existing record; \(reference.recordName) is not there")
            }
        }
        return nil
    }

    /// The live records of the zone among `targets`.
    private func liveNames(_ targets: Set<String>, zone: Int64, on connection: PostgresConnection) async throws -> Set<String> {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT r.name FROM unnest($2::text[]) AS wanted(name)
                    CROSS JOIN LATERAL (SELECT name, deleted FROM \(schema).records WHERE zone = $1 AND name = wanted.name LIMIT 1) r WHERE NOT r.deleted
                    """,
                binds: try Self.binds(zone, Array(targets))), logger: logger)
        var live: Set<String> = []
        for try await row in rows { live.insert(try row.decode(String.self)) }
        return live
    }

    /// Whether a bulk write's rows carry their times: only when the store has a clock of its own (else the server
    /// stamps them, the columns' default).
    private var sendsStamps: Bool { clock != nil }

    /// The zone's number with its turn taken (as ``lockedZone(_:on:)`` takes it), `sequences` change sequences of it
    /// taken at once (the last of them), the time the write is stamped with, and Ferry's schema first on the
    /// transaction's search path (`COPY` names a table without its schema); `nil` when there is no such zone.
    ///
    /// One statement takes the turn (before the zone's row is read or locked, as every writer takes them), then the
    /// sequences from the zone's row, which is not there when the zone was deleted (or made again) meanwhile; its
    /// number is the one seen before, else looked up first.
    private func lockedZoneReserving(_ zone: ZoneID, sequences: Int, on connection: PostgresConnection) async throws
        -> (number: Int64, last: Int64, now: Int64)?
    {
        func reserve(_ number: Int64) async throws -> (number: Int64, last: Int64, now: Int64)? {
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        UPDATE \(schema).zones SET last_seq = last_seq + $2
                        WHERE id = $1 AND zone_name = $3 AND owner_name = $4 AND (SELECT true FROM pg_advisory_xact_lock(hashtext($5), $6))
                        RETURNING last_seq, set_config('search_path', $5, true), \(Self.serverTime)
                        """,
                    binds: try Self.binds(number, Int64(sequences), zone.zoneName, zone.ownerName, schema, Int32(truncatingIfNeeded: number))),
                logger: logger)
            var reserved: (Int64, Int64, Int64)?
            for try await row in rows {
                let (last, _, now) = try row.decode((Int64, String, Int64).self)
                reserved = (number, last, writeTime(server: now))
            }
            return reserved
        }
        if let known = zoneNumbers.withLock({ $0[zone] }), let reserved = try await reserve(known) { return reserved }
        // Not known, or no longer that zone's number.
        guard let number = try await zoneNumber(zone, on: connection) else { return nil }
        return try await reserve(number)
    }

    /// Defers nothing up front: a zone's first bulk write gives it partitions of its own, indexed at the end, when it
    /// is empty and this store's copy holds its claim (``prepareFirstLoad(_:writing:)``; ``endBulkLoad()`` indexes them).
    public func beginBulkLoad() async throws -> Bool { false }

    /// Before this store's first bulk write into `zone`, of `count` records: partitions of the zone's own, without
    /// secondary indexes, when the write is large (``ownPartitionsFrom``), the zone holds nothing (not even a tombstone)
    /// and this store's copy holds its claim (so no other copy writes it meanwhile); and which tables its bulk writes go
    /// into.
    ///
    /// The partitions are made and attached in one statement (``PostgresSchema/ownPartitionsStatement(zone:schema:)``).
    /// Attaching one locks the shared partitions and scans them for rows of the zone, so a zone whose shared partitions
    /// are in use is loaded into them with their indexes (a busy one is not waited for long), as is a zone of a role
    /// without `CREATE` on the schema. A copy interrupted before its end leaves the indexes to the next copy of the
    /// zone, or to any copy that can take the zone's claim (``endBulkLoad()``).
    private func prepareFirstLoad(_ zone: ZoneID, writing count: Int) async throws {
        guard let number = try await knownZoneNumber(zone), bulkLoads.withLock({ $0[number] }) == nil else { return }
        if count >= Self.ownPartitionsFrom, try await claims.holds(number) {
            do {
                try await database.execute(PostgresQuery(unsafeSQL: PostgresSchema.ownPartitionsStatement(zone: number, schema: schema)))
            } catch let error as PostgresBackendError where error.sqlState == "55P03" || error.sqlState == "40P01" || error.code == .permission {
                // The shared partitions in use (not locked within 2 s, or another copy attaching), or no CREATE on the schema.
                logger.debug("\(name): zone \(zone) is loaded into the shared partitions: \(error.message)")
            }
        }
        // The zone's rows go into its partitions where it has them, else into the shared ones: straight into them where
        // this role may (a role granted the parent tables may not have it on a partition another role made).
        func qualified(_ place: ZoneLoad.Place, _ table: String) -> String { "\(schema).\(place.table(table, zone: number))" }
        let row = try await database.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT to_regclass($1) IS NOT NULL, coalesce(has_table_privilege(to_regclass($1), 'INSERT') AND has_table_privilege(to_regclass($2), 'INSERT'), false),
                           coalesce(has_table_privilege(to_regclass($3), 'INSERT') AND has_table_privilege(to_regclass($4), 'INSERT'), false)
                    """,
                binds: try Self.binds(qualified(.own, "records"), qualified(.own, "refs"), qualified(.shared, "records"), qualified(.shared, "refs")))
        ).first
        let (own, ownWritable, sharedWritable) = try row?.decode((Bool, Bool, Bool).self) ?? (false, false, false)
        let place: ZoneLoad.Place = own ? (ownWritable ? .own : .parent) : (sharedWritable ? .shared : .parent)
        bulkLoads.withLock { $0[number] = ZoneLoad(place: place) }
    }

    /// Builds the secondary indexes of every zone's partitions of its own that lack one of them, when this store's copy
    /// holds or can take the zone's claim (a copy still loading a zone holds it), and of the shared partitions; and,
    /// after a large load into a zone, vacuums and analyzes the partitions its rows went to (the records' pages
    /// all-visible, so that the feed's index answers digest comparisons alone).
    public func endBulkLoad() async throws {
        var zones: [Int64] = []
        for row in try await read(PostgresQuery(unsafeSQL: "SELECT id FROM \(schema).zones")) { zones.append(try row.decode(Int64.self)) }
        let absent = try await absentRelations(
            zones.map { PostgresSchema.partitionName("records", zone: $0) }
                + (zones.flatMap { PostgresSchema.secondaryIndexes(zone: $0) } + PostgresSchema.sharedIndexes).map(\.name))
        // The shared partitions' (no copy drops them in this layout; one a copy of layout 5 dropped and did not build).
        var indexes = PostgresSchema.sharedIndexes.filter { absent.contains($0.name) }
        var taken: [Int64] = []
        for number in zones where !absent.contains(PostgresSchema.partitionName("records", zone: number)) {
            let lacking = PostgresSchema.secondaryIndexes(zone: number).filter { absent.contains($0.name) }
            guard !lacking.isEmpty else { continue }
            if try await claims.holds(number) {
                indexes += lacking
            } else if try await claims.tryClaim(number) {
                indexes += lacking
                taken.append(number)
            }
        }
        // After a large load, a zone's partitions are vacuumed and analyzed, so that the next copy's queries are planned
        // for their size now and autovacuum has nothing left to do about the load (it would otherwise vacuum and analyze
        // them again within a minute, in the middle of whatever comes next). The parent tables, which a role writes when
        // it may not write the partitions, are not its to vacuum.
        var tables: [String: (vacuumed: Bool, indexes: [String])] = [:]
        for (number, load) in bulkLoads.withLock({ $0 }) where load.written >= 10_000 && load.place != .parent {
            for table in ["records", "refs"] { tables[load.place.table(table, zone: number), default: (false, [])].vacuumed = true }
        }
        for index in indexes {
            tables[index.table, default: (false, [])].indexes.append(
                "CREATE INDEX IF NOT EXISTS \(index.name) ON \(schema).\(index.table) \(index.columns)")
        }
        let (database, schema, logger, name) = (self.database, self.schema, self.logger, self.name)
        /// Runs `statement`; one this role may not run (an index of a partition another role made) is left to that
        /// role's next copy, with a warning.
        @Sendable func run(_ statement: String) async throws {
            do {
                try await database.execute(PostgresQuery(unsafeSQL: statement))
            } catch let error as PostgresBackendError where error.code == .permission {
                logger.warning(
                    "\(name): \(statement) was not run: \(error.message); the partition's owner can run it, or its next copy into the zone does")
            }
        }
        // A task per partition: `VACUUM (ANALYZE)` first, which marks the freshly written pages all-visible (an
        // index-only scan of the feed's index needs that to skip the rows themselves) and sets the rows' hint bits,
        // which the index builds would otherwise set; then its indexes side by side, each on a connection of its own
        // (the server builds each on one core); all partitions at once, which was faster than zone after zone.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (table, work) in tables {
                group.addTask {
                    if work.vacuumed { try await run("VACUUM (ANALYZE) \(schema).\(table)") }
                    try await withThrowingTaskGroup(of: Void.self) { builds in
                        for statement in work.indexes { builds.addTask { try await run(statement) } }
                        try await builds.waitForAll()
                    }
                }
            }
            try await group.waitForAll()
        }
        bulkLoads.withLock { $0 = [:] }
        for number in taken { try await claims.release(number) }
    }

    /// Which of `names` (tables or indexes of the schema) do not exist.
    private func absentRelations(_ names: [String]) async throws -> Set<String> {
        var absent: Set<String> = []
        for row in try await read(
            PostgresQuery(
                unsafeSQL: "SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass($2 || '.' || name) IS NULL",
                binds: try Self.binds(names, schema)))
        {
            absent.insert(try row.decode(String.self))
        }
        return absent
    }
}

extension PostgresRecordStore {
    /// The fewest records a zone's first bulk write must hold for the zone to get partitions of its own.
    ///
    /// Tables of its own cost the zone their making and a moment's lock on the shared partitions, and pay for themselves
    /// only over many records: a zone that fills a copy's round (2 000 records) is likely to be a large one; a zone of
    /// a few records, as sharing makes many of, stays in the shared partitions, so that a database of thousands of
    /// zones is not thousands of tables (see Docs/design-notes.md).
    static let ownPartitionsFrom = 1_000
}

/// What a store's bulk writes into one zone know of it: how many records they wrote, and where they write.
struct ZoneLoad {
    /// Where a zone's bulk writes go.
    enum Place {
        /// The zone's partitions of its own.
        case own
        /// The shared partitions.
        case shared
        /// The parent tables, which find each row's partition (for a role that may not write the partitions).
        case parent

        /// The table of this place for the parent table `table` (`records` or `refs`) and the zone numbered `zone`.
        func table(_ table: String, zone: Int64) -> String {
            switch self {
            case .own: PostgresSchema.partitionName(table, zone: zone)
            case .shared: PostgresSchema.sharedPartition(table)
            case .parent: table
            }
        }
    }

    var written = 0
    var place = Place.parent
}

/// What ``PostgresRecordStore/prepareCreation(_:contents:in:)`` makes of a bulk write's records.
struct PreparedRows: Sendable {
    /// Each record's refusal that needs no look at the zone, `nil` for the others.
    var refusals: [RecordOutcome?]
    /// The records that VALIDATE references point at.
    var validated: Set<String>
    /// The records' names.
    var names: [String]
    /// The records' indices in the order of their change sequences and rows: the names' order, or the call's when a
    /// record has a VALIDATE reference to another of the call.
    var order: [Int]
    /// The rows of the records not refused, in ``order``, each without what its write adds
    /// (``CopyRows/recordBody(record:content:)``).
    var bodies: ByteBuffer
    /// Where each of those records' row ends in ``bodies``.
    var ends: [Int]
    /// Each record's DELETE_SELF targets, sorted.
    var deleteSelf: [[String]]
}

/// What a bulk write did with each record: refused it, or wrote it at an offset among the change sequences from
/// `first`, at `now`.
struct BulkWritten {
    /// Each record's refusal, `nil` for the others.
    var refused: [RecordOutcome?]
    /// Each written record's place among the written ones (its change sequence is `first` plus it), -1 for the others.
    var offsets: [Int]
    var first: Int64
    var now: Int64

    /// Whether every record was written.
    var savedAll: Bool { !offsets.contains(-1) }

    /// Each record's refusal, `nil` for a record written.
    func refusals(zone: ZoneID) -> [RecordOutcome?] {
        zip(refused, offsets).map { refusal, offset in refusal ?? (offset >= 0 ? nil : .failed(zone: zone)) }
    }

    /// Each of `records` (the bulk write's) as `modify` gives it: its refusal, or the record as written, with its change
    /// tag and times.
    func outcomes(of records: [Record], zone: ZoneID) -> [RecordOutcome] {
        records.indices.map { index in
            if let outcome = refused[index] { return outcome }
            guard offsets[index] >= 0 else { return .failed(zone: zone) }
            var saved = records[index]
            saved.system = SystemFields(
                changeTag: String(first + Int64(offsets[index]), radix: 36), created: RecordStamp(timestamp: now),
                modified: RecordStamp(timestamp: now))
            return .saved(saved)
        }
    }
}

extension RecordOutcome {
    /// The outcome of a record that a bulk write neither refused nor wrote (which does not happen).
    fileprivate static func failed(zone: ZoneID) -> RecordOutcome {
        .failed(RecordID(recordName: "", zoneID: zone), .internalError, reason: "the bulk write gave no outcome")
    }
}

/// Rows in COPY's binary format, gathered into buffers of about 1 MiB.
///
/// The server takes binary rows 10-25 % faster than text ones (no field splitting, no escapes, numbers and the digest
/// as they are), and they need no escaping to make. postgres-nio 1.33, the version this project builds with, has no
/// option for the format (``PostgresCopyFromFormat`` offers text only) and writes the column names into its statement
/// as given: ``binary(_:)`` makes the last name end the list and ask for the binary format, commenting out the text
/// option that follows on the same line. A postgres-nio that quoted names properly would make every bulk write fail
/// with an unknown column, which every test of a bulk write would show.
private struct CopyRows {
    private var buffer: ByteBuffer

    init(capacity: Int = 1 << 20) { buffer = ByteBufferAllocator().buffer(capacity: capacity) }

    /// Rows of a COPY, starting with the binary format's signature, flags and (empty) header extension.
    static func started() -> CopyRows {
        var rows = CopyRows()
        rows.buffer.writeBytes([0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00])
        rows.buffer.writeInteger(UInt32(0))
        rows.buffer.writeInteger(UInt32(0))
        return rows
    }

    /// The columns of a `copyFrom`, with the binary format asked for after the last (see the type's documentation).
    static func binary(_ columns: [String]) -> [String] {
        guard let last = columns.last else { return columns }
        return columns.dropLast() + ["\(last)\") FROM STDIN WITH (FORMAT binary) --"]
    }

    var isFull: Bool { buffer.readableBytes >= 1 << 20 }
    var count: Int { buffer.readableBytes }

    mutating func take() -> ByteBuffer {
        defer { buffer = ByteBufferAllocator().buffer(capacity: 1 << 20) }
        return buffer
    }

    /// The end of the data: a field count of -1.
    mutating func end() { buffer.writeInteger(Int16(-1)) }

    /// The columns of a row of `records`, in the order of ``recordBody(record:content:columns:)`` and then
    /// ``recordRow(bodies:range:suffix:sequence:)``: what is known of a record before its write first; the times only when they
    /// are `stamped` (else the server stamps them).
    static func recordColumns(stamped: Bool) -> [String] {
        ["name", "type", "deleted", "digest", "fields", "zone"] + (stamped ? ["created", "modified"] : []) + ["seq", "tag"]
    }

    /// The start of a record's row, known before the write: its field count, name, type, the tombstone flag (false),
    /// digest, fields (the fields object of the record's canonical JSON, as `jsonb`'s binary form: version 1, then the
    /// text).
    mutating func recordBody(record: Record, content: RecordContent, columns: Int16) {
        buffer.writeInteger(columns)
        text(record.recordName)
        text(record.recordType)
        buffer.writeInteger(Int32(1))
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(Int32(32))
        content.digest.withUnsafeBytes { _ = buffer.writeBytes($0) }
        let fields = content.fieldsJSON
        buffer.writeInteger(Int32(fields.count + 1))
        buffer.writeInteger(UInt8(1))
        buffer.writeBytes(fields)
    }

    /// What every row of a write holds after its body: the zone, then the time twice when there is one
    /// (`timestamptz`: microseconds since 2000-01-01).
    static func suffix(zone: Int64, stamp: Int64?) -> [UInt8] {
        var bytes: [UInt8] = []
        func int64(_ value: Int64) {
            bytes += withUnsafeBytes(of: Int32(8).bigEndian, Array.init)
            bytes += withUnsafeBytes(of: value.bigEndian, Array.init)
        }
        int64(zone)
        if let stamp {
            let microseconds = (stamp - 946_684_800_000) * 1000
            int64(microseconds)
            int64(microseconds)
        }
        return bytes
    }

    /// A row of `records`: its body, the write's suffix, the change sequence and the change tag (the sequence in base
    /// 36).
    mutating func recordRow(bodies: ByteBuffer, range: Range<Int>, suffix: [UInt8], sequence: Int64) {
        // Copied from the bodies' bytes in place: a slice of them per row retained and released their storage.
        bodies.withUnsafeReadableBytes { _ = buffer.writeBytes(UnsafeRawBufferPointer(rebasing: $0[range])) }
        buffer.writeBytes(suffix)
        buffer.writeInteger(Int32(8))
        buffer.writeInteger(sequence)
        base36(sequence)
    }

    mutating func referenceRow(zone: Int64, source: String, target: String) {
        buffer.writeInteger(Int16(4))
        buffer.writeInteger(Int32(8))
        buffer.writeInteger(zone)
        text(source)
        text(target)
        buffer.writeInteger(Int32(11))
        buffer.writeStaticString("DELETE_SELF")
    }

    /// A number in base 36 (`String(value, radix: 36)`) as a text field, without making a string.
    private mutating func base36(_ value: Int64) {
        guard value > 0 else {
            text(String(value, radix: 36))
            return
        }
        let digits: StaticString = "0123456789abcdefghijklmnopqrstuvwxyz"
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { out in
            digits.withUTF8Buffer { digits in
                var rest = value
                var start = 16
                while rest > 0 {
                    start -= 1
                    out[start] = digits[Int(rest % 36)]
                    rest /= 36
                }
                buffer.writeInteger(Int32(16 - start))
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(out)[start...]))
            }
        }
    }

    /// A string as a text field: its length, then its UTF-8 bytes as they are.
    private mutating func text(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            buffer.writeInteger(Int32(bytes.count))
            buffer.writeBytes(UnsafeRawBufferPointer(bytes))
        }
    }
}
