import GRDB

/// The tables of a local store (format version 2).
///
/// Records are rows appended by row ID with a unique index on (name, zone), `records_name`: random record names do
/// not reshuffle the large rows. They keep their canonical CloudKit JSON without system fields (`body`) and its SHA-256
/// (`digest`), so a copy can tell "unchanged" without decoding; tombstones keep only identity and change metadata.
/// `refs` holds DELETE_SELF references, indexed by target (`refs_target`) for cascading deletes; a record's own rows
/// there are found from its body. Both random-order indexes are separate from their tables so that the first copy into
/// an empty store can drop them and build them once at its end (see ``LocalStore/beginBulkLoad()``). Assets are stored
/// once by SHA-256, in 1 MiB chunks.
///
/// The two indexes start with the name (the zone is nearly always the same, and SQLite's sorter compares a leading text
/// column without decoding the whole key), which builds them faster at the end of a bulk load; every lookup gives both
/// columns. `refs_target` leaves the source out: a search by target reads the few matching rows anyway, and without a
/// second record name per entry the index is half the size (a record's distinct targets are written once each, so the
/// rows stay unique without the index enforcing it). A copy's checkpoint (`copy_journal`) and the records it wrote without
/// a reference that closed a cycle, to patch at its end (`copy_deferred`), live beside the data they describe.
///
/// Version 1 stores declared the two indexes inside their tables (`UNIQUE(zone, name)`, a `WITHOUT ROWID` primary key)
/// and may have a second `refs_source` index, and earlier version 2 stores have the indexes with the zone first or a
/// unique `refs_target` with the source: every statement works on all of them, only bulk loading needs version 2.
enum LocalStoreSchema {
    /// What a new store is created with: the tables and their indexes (the two a bulk load rebuilds are declared once,
    /// in ``bulkIndexes``).
    static var sql: String { tables + bulkIndexes.map { "\($0.sql);\n" }.joined() }

    private static let tables = """
        CREATE TABLE ferry_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE zones(
            id INTEGER PRIMARY KEY,
            zone_name TEXT NOT NULL,
            owner_name TEXT NOT NULL,
            last_seq INTEGER NOT NULL DEFAULT 0,
            UNIQUE(zone_name, owner_name));
        CREATE TABLE records(
            id INTEGER PRIMARY KEY,
            zone INTEGER NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            tag TEXT NOT NULL,
            seq INTEGER NOT NULL,
            created INTEGER NOT NULL,
            modified INTEGER NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            digest BLOB,
            body BLOB);
        CREATE INDEX records_feed ON records(zone, seq);
        CREATE TABLE refs(zone INTEGER NOT NULL, target TEXT NOT NULL, source TEXT NOT NULL);
        CREATE TABLE assets(sha256 BLOB PRIMARY KEY, size INTEGER NOT NULL, chunks INTEGER NOT NULL);
        CREATE TABLE asset_chunks(sha256 BLOB NOT NULL, n INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY(sha256, n)) WITHOUT ROWID;
        CREATE TABLE copy_journal(run TEXT PRIMARY KEY, done INTEGER NOT NULL, finished INTEGER NOT NULL, source TEXT NOT NULL);
        CREATE TABLE copy_deferred(run TEXT NOT NULL, seq INTEGER NOT NULL, record BLOB NOT NULL, PRIMARY KEY(run, seq)) WITHOUT ROWID;

        """

    /// The indexes a bulk load drops, and builds again at its end (and a new store is created with).
    static let bulkIndexes = [
        (name: "records_name", sql: "CREATE UNIQUE INDEX IF NOT EXISTS records_name ON records(name, zone)"),
        (name: "refs_target", sql: "CREATE INDEX IF NOT EXISTS refs_target ON refs(target, zone)"),
    ]

    /// The `ferry_meta` key present while a bulk load has the indexes dropped.
    static let bulkLoadKey = "bulk_load"

    /// Whether a bulk load has the indexes dropped (its marker is in `ferry_meta`).
    static func hasBulkLoadMarker(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM ferry_meta WHERE key = ?", arguments: [bulkLoadKey]) ?? false
    }
}
