import FerryCore
import FerryJSON
import Foundation
import GRDB

/// What `ferry inspect` reports about a store.
public struct StoreInspection: Sendable {
    /// One entity with its count and properties.
    public struct EntityReport: Sendable {
        public var name: String
        public var number: Int
        public var parent: String?
        public var isAbstract: Bool
        public var table: String
        /// Rows of this concrete entity.
        public var count: Int
        /// Attributes declared by this entity: name, model type (with external storage, transformer, derivation), column.
        public var attributes: [(name: String, type: String, column: String?)]
        public var relationships:
            [(name: String, kind: String, destination: String, inverse: String?, deleteRule: String, ordered: Bool, storage: String)]
    }

    public var store: String
    public var uuid: String
    public var frameworkVersion: Int?
    public var modelSource: ModelSource
    public var modelVersionIdentifiers: [String]
    public var entities: [EntityReport]
    public var joinTables: [String]
    public var externalDataFiles: Int
    public var ancillaryTables: [String]
    public var ancillaryEntities: [String]
    /// References whose target row does not exist, by relationship (`Entity.relationship`).
    public var danglingReferences: [String: Int]
    public var notes: [String]
    public var warnings: [String]

    /// Inspects an open store: counts each entity's rows and checks every to-one reference's target exists.
    public init(_ store: CoreDataStore) throws {
        self.store = store.files.store
        uuid = store.metadata.uuid
        frameworkVersion = store.metadata.frameworkVersion
        modelSource = store.model.source
        modelVersionIdentifiers = store.model.model.versionIdentifiers
        joinTables = store.schema.joinTables
        ancillaryTables = store.schema.ancillaryTables
        ancillaryEntities = store.schema.ancillaryEntities.map { "\($0.name) (\($0.number))" }
        notes = store.model.notes
        warnings = store.schema.warnings
        externalDataFiles = store.files.externalData.map { (try? FileManager.default.contentsOfDirectory(atPath: $0).count) ?? 0 } ?? 0
        var reports: [EntityReport] = []
        var dangling: [String: Int] = [:]
        for entity in store.schema.entities {
            let count = try store.count(of: entity)
            reports.append(
                EntityReport(
                    name: entity.description.name, number: entity.number, parent: entity.description.parentName,
                    isAbstract: entity.description.isAbstract, table: entity.table, count: count,
                    attributes: entity.attributes.filter { attribute in
                        entity.description.attributes.contains { $0.name == attribute.description.name }
                    }
                    .map { ($0.description.name, Self.describe($0.description), $0.column) },
                    relationships: entity.relationships.filter { relationship in
                        entity.description.relationships.contains { $0.name == relationship.description.name }
                    }.map { relationship in
                        let description = relationship.description
                        return (
                            description.name, description.isToMany ? "to-many" : "to-one", description.destination, description.inverse,
                            description.deleteRule.rawValue, description.isOrdered, Self.describe(relationship.storage)
                        )
                    }))
            for relationship in entity.relationships
            where entity.description.relationships.contains(where: { $0.name == relationship.description.name }) {
                guard case .foreignKey(let column, _) = relationship.storage, let destination = relationship.destinationTable else { continue }
                let missing = try store.connection.read { db in
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT count(*) FROM \(entity.table.quotedDatabaseIdentifier) AS t
                            WHERE t.Z_ENT IN (\(entity.hierarchyNumbers.map(String.init).joined(separator: ","))) AND t.\(column.quotedDatabaseIdentifier) IS NOT NULL
                            AND NOT EXISTS (SELECT 1 FROM \(destination.quotedDatabaseIdentifier) AS d WHERE d.Z_PK = t.\(column.quotedDatabaseIdentifier))
                            """) ?? 0
                }
                if missing > 0 { dangling["\(entity.description.name).\(relationship.description.name)"] = missing }
            }
        }
        entities = reports
        danglingReferences = dangling
    }

    static func describe(_ attribute: AttributeDescription) -> String {
        var details: [String] = []
        if attribute.allowsExternalStorage == true { details.append("external storage allowed") }
        if let transformer = attribute.valueTransformerName { details.append("transformer \(transformer)") }
        if attribute.isDerived { details.append("derived") }
        if attribute.isTransient { details.append("transient") }
        return attribute.type.xmlName + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
    }

    static func describe(_ storage: StoreSchema.Storage) -> String {
        switch storage {
        case .foreignKey(let column, let entityColumn): "column \(column)" + (entityColumn.map { " (entity in \($0))" } ?? "")
        case .inverseForeignKey(let column, let order): "inverse column \(column)" + (order.map { ", ordered by \($0)" } ?? "")
        case .joinTable(let table, let source, let destination, let order):
            "join table \(table)(\(source), \(destination))" + (order.map { ", ordered by \($0)" } ?? "")
        case .missing(let reason): "missing: \(reason)"
        }
    }

    /// The report as JSON.
    public var jsonValue: JSONValue {
        [
            "store": .string(store), "uuid": .string(uuid), "framework_version": frameworkVersion.map { .integer(Int64($0)) } ?? .null,
            "model_source": .string(modelSource.description), "model_source_kind": .string(modelSource.kind),
            "model_version_identifiers": .array(modelVersionIdentifiers.map { .string($0) }),
            "entities": .array(
                entities.map { entity in
                    [
                        "name": .string(entity.name), "z_ent": .integer(Int64(entity.number)), "parent": entity.parent.map { .string($0) } ?? .null,
                        "abstract": .bool(entity.isAbstract), "table": .string(entity.table), "count": .integer(Int64(entity.count)),
                        "attributes": .array(
                            entity.attributes.map {
                                ["name": .string($0.name), "type": .string($0.type), "column": $0.column.map { .string($0) } ?? .null]
                            }),
                        "relationships": .array(
                            entity.relationships.map {
                                [
                                    "name": .string($0.name), "kind": .string($0.kind), "destination": .string($0.destination),
                                    "inverse": $0.inverse.map { .string($0) } ?? .null, "delete_rule": .string($0.deleteRule),
                                    "ordered": .bool($0.ordered),
                                    "storage": .string($0.storage),
                                ]
                            }),
                    ]
                }),
            "join_tables": .array(joinTables.map { .string($0) }), "external_data_files": .integer(Int64(externalDataFiles)),
            "ancillary_tables": .array(ancillaryTables.map { .string($0) }), "ancillary_entities": .array(ancillaryEntities.map { .string($0) }),
            "dangling_references": .object(
                JSONObject(danglingReferences.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .integer(Int64($0.value))) })),
            "notes": .array(notes.map { .string($0) }), "warnings": .array(warnings.map { .string($0) }),
        ]
    }
}
