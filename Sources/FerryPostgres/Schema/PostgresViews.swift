import FerryRecords
import Foundation
import Logging
import PostgresNIO

/// Views of Ferry's records for people: one per record type, with a typed column per field.
///
/// The field types come from the records themselves (what each field of each type holds in the `jsonb` documents), so
/// the views fit whatever was copied in. `STRING` is `text`, `INT64` `bigint`, `DOUBLE` `double precision`,
/// `TIMESTAMP` `timestamptz`, `BYTES` `bytea`, a `REFERENCE` the record name it points at, an `ASSET` its SHA-256 (hex),
/// a `LOCATION` and every list `jsonb`. A field whose records disagree on its type is `jsonb` too, and said so.
public enum PostgresViews {
    /// What was made.
    public struct Made: Sendable {
        /// The schema the views are in.
        public var schema: String
        /// Each view: its record type, its columns (name and SQL type) in order.
        public var views: [(recordType: String, columns: [(name: String, type: String)])]
        /// Fields whose records disagree on their type, with the types seen.
        public var mixed: [(recordType: String, field: String, types: [String])]
        /// Views of an earlier run whose record type holds no records any more (dropped).
        public var dropped: [String]
    }

    /// Creates or replaces the views in `viewSchema` (made if missing), in one transaction; views an earlier run made
    /// for record types that hold no live records now are dropped.
    public static func create(in database: PostgresDatabase, viewSchema: String) async throws -> Made {
        let schema = database.settings.schema
        var fieldTypes: [String: [String: Set<String>]] = [:]
        var order: [String: [String]] = [:]
        try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT r.type, f.key, f.value->>'type' FROM \(schema).records r, jsonb_each(r.fields) f
                    WHERE NOT r.deleted GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                    """)
        ) { row in
            let (type, field, kind) = try row.decode((String, String, String?).self)
            if fieldTypes[type]?[field] == nil { order[type, default: []].append(field) }
            fieldTypes[type, default: [:]][field, default: []].insert(kind ?? "UNKNOWN")
        }
        var types: [String] = []
        try await database.query(PostgresQuery(unsafeSQL: "SELECT DISTINCT type FROM \(schema).records WHERE NOT deleted ORDER BY 1")) { row in
            types.append(try row.decode(String.self))
        }
        var made = Made(schema: viewSchema, views: [], mixed: [], dropped: [])
        var statements = ["CREATE SCHEMA IF NOT EXISTS \(quoted(viewSchema))"]
        for type in types {
            let fields = order[type] ?? []
            let taken = Set(fields)
            var columns: [(name: String, type: String)] = []
            var select: [String] = []
            // The record's own columns; a field of the same name keeps it, and the record's column takes a `_`.
            for (column, expression, sqlType) in [
                // The name in the database's own collation, as the view's other text columns: people sort and compare
                // them alike.
                ("record_name", "r.name COLLATE \"default\"", "text"), ("zone", "z.zone_name", "text"), ("created", "r.created", "timestamptz"),
                ("modified", "r.modified", "timestamptz"), ("change_tag", "r.tag", "text"),
            ] {
                let name = taken.contains(column) ? "_" + column : column
                select.append("\(expression) AS \(quoted(name))")
                columns.append((name, sqlType))
            }
            for field in fields {
                let kinds = fieldTypes[type]?[field] ?? []
                let kind = kinds.count == 1 ? kinds.first ?? "" : ""
                if kinds.count > 1 { made.mixed.append((type, field, kinds.sorted())) }
                let (expression, sqlType) = column(for: kind, value: "r.fields->\(literal(field))")
                select.append("\(expression) AS \(quoted(field))")
                columns.append((field, sqlType))
            }
            let view = "\(quoted(viewSchema)).\(quoted(type))"
            statements.append("DROP VIEW IF EXISTS \(view)")
            statements.append(
                """
                CREATE VIEW \(view) AS SELECT \(select.joined(separator: ", "))
                FROM \(schema).records r JOIN \(schema).zones z ON z.id = r.zone WHERE r.type = \(literal(type)) AND NOT r.deleted
                """)
            statements.append("COMMENT ON VIEW \(view) IS \(literal(comment))")
            made.views.append((type, columns))
        }
        // Views an earlier run made whose record type is gone.
        var earlier: [String] = []
        try await database.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = $1 AND c.relkind = 'v' AND obj_description(c.oid, 'pg_class') = $2 ORDER BY 1
                    """, binds: try PostgresRecordStore.binds(viewSchema, comment))
        ) { row in earlier.append(try row.decode(String.self)) }
        for name in earlier where !types.contains(name) {
            statements.append("DROP VIEW \(quoted(viewSchema)).\(quoted(name))")
            made.dropped.append(name)
        }
        let all = statements
        try await database.transaction { connection in
            for statement in all { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: database.logger) }
        }
        return made
    }

    /// Drops the views an earlier run made in `viewSchema` that use the record names of the database's schema.
    ///
    /// They are what holds a schema at layout 6 (``PostgresSchema/migrate(_:migrating:held:)``) when no other view
    /// does; ``create(in:viewSchema:)`` makes them again. Views of other schemas, an earlier run's with another
    /// `--view-schema` among them, are left alone (and hold the schema still, which the migration says).
    /// - Returns: the views dropped, by qualified name.
    public static func dropHoldingViews(in database: PostgresDatabase, viewSchema: String) async throws -> [String] {
        let schema = database.settings.schema
        return try await database.transaction { connection in
            let holding = try await PostgresSchema.dependentViews(schema: schema, on: connection, logger: database.logger)
            var ours: [String] = []
            for try await row in try await connection.query(
                """
                SELECT v FROM unnest(\(holding)::text[]) AS v JOIN pg_class c ON c.oid = to_regclass(v)
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE obj_description(c.oid, 'pg_class') IS NOT DISTINCT FROM \(comment) AND n.nspname = \(viewSchema)
                """, logger: database.logger)
            {
                ours.append(try row.decode(String.self))
            }
            for view in ours { try await connection.query(PostgresQuery(unsafeSQL: "DROP VIEW IF EXISTS \(view)"), logger: database.logger) }
            return ours
        }
    }

    /// What marks a view as made by this command, so a later run may replace or drop it (and no other).
    static let comment = "made by ferry pg-views from the records of each type; run ferry pg-views again after copies"

    /// The SQL of a field's value as a column of its type.
    static func column(for kind: String, value: String) -> (expression: String, type: String) {
        switch kind {
        case "STRING": ("\(value)->>'value'", "text")
        case "INT64": ("(\(value)->>'value')::bigint", "bigint")
        case "DOUBLE": ("(\(value)->>'value')::double precision", "double precision")
        case "TIMESTAMP": ("to_timestamp((\(value)->>'value')::bigint / 1000.0)", "timestamptz")
        case "BYTES": ("decode(\(value)->>'value', 'base64')", "bytea")
        case "REFERENCE": ("\(value)->'value'->>'recordName'", "text")
        case "ASSET": ("\(value)->'value'->>'sha256'", "text")
        default: ("\(value)->'value'", "jsonb")
        }
    }

    /// An identifier quoted for SQL.
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A string literal for SQL.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
