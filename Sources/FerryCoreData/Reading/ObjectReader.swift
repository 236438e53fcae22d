import FerryCore
import Foundation
import GRDB

/// Reads the objects of one concrete entity in primary-key order.
///
/// One ordered scan of its table, with each to-many relationship merged in from a second scan ordered by the foreign key (or join-table column). Memory does not grow with the store.
struct ObjectReader {
    let store: CoreDataStore
    let decoder: ValueDecoder

    init(store: CoreDataStore) {
        self.store = store
        decoder = ValueDecoder(files: store.files)
    }

    /// Reads every object of `entity`; with `properties`, only those attributes and relationships (a lighter scan).
    func read(_ entity: StoreSchema.Entity, properties: Set<String>? = nil, db: Database, _ body: (ManagedObject) throws -> Void) throws {
        let table = entity.table.quotedDatabaseIdentifier
        let attributes = properties.map { wanted in entity.attributes.filter { wanted.contains($0.description.name) } } ?? entity.attributes
        let relationships = properties.map { wanted in entity.relationships.filter { wanted.contains($0.description.name) } } ?? entity.relationships
        // Columns: Z_PK, attributes, then for each to-one relationship its key and (when needed) the target's entity.
        var select = ["t.Z_PK"]
        var joins: [String] = []
        var attributeSlots: [AttributeSlot] = []
        for attribute in attributes {
            if let column = attribute.column {
                attributeSlots.append(AttributeSlot(attribute.description, column: select.count))
                select.append("t.\(column.quotedDatabaseIdentifier)")
            } else {
                attributeSlots.append(AttributeSlot(attribute.description, column: nil))
            }
        }
        var relationshipSlots: [RelationshipSlot] = []
        var toMany: [LinkCursor] = []
        for (position, relationship) in relationships.enumerated() {
            switch relationship.storage {
            case .foreignKey(let column, let entityColumn):
                let keyIndex = select.count
                select.append("t.\(column.quotedDatabaseIdentifier)")
                var entityIndex: Int?
                if let entityColumn {
                    entityIndex = select.count
                    select.append("t.\(entityColumn.quotedDatabaseIdentifier)")
                } else if relationship.destinationNumbers.count > 1, let destination = relationship.destinationTable {
                    // The destination has sub-entities and no entity column: look the target's Z_ENT up.
                    entityIndex = select.count
                    select.append("j\(position).Z_ENT")
                    joins.append(
                        "LEFT JOIN \(destination.quotedDatabaseIdentifier) AS j\(position) ON j\(position).Z_PK = t.\(column.quotedDatabaseIdentifier)"
                    )
                }
                relationshipSlots.append(RelationshipSlot(relationship, kind: .toOne(key: keyIndex, entity: entityIndex), schema: store.schema))
            case .inverseForeignKey(let column, let orderColumn):
                guard let destination = relationship.destinationTable else { continue }
                let numbers = relationship.destinationNumbers.map(String.init).joined(separator: ",")
                let order = orderColumn.map { "\($0.quotedDatabaseIdentifier), " } ?? ""
                let sql = """
                    SELECT \(column.quotedDatabaseIdentifier), Z_PK, Z_ENT FROM \(destination.quotedDatabaseIdentifier)
                    WHERE \(column.quotedDatabaseIdentifier) IS NOT NULL AND Z_ENT IN (\(numbers))
                    ORDER BY \(column.quotedDatabaseIdentifier), \(order)Z_PK
                    """
                relationshipSlots.append(RelationshipSlot(relationship, kind: .toMany(cursor: toMany.count), schema: store.schema))
                toMany.append(try LinkCursor(db: db, sql: sql))
            case .joinTable(let join, let source, let destinationColumn, let orderColumn):
                guard let destination = relationship.destinationTable else { continue }
                let order = orderColumn.map { "j.\($0.quotedDatabaseIdentifier), " } ?? ""
                let sql = """
                    SELECT j.\(source.quotedDatabaseIdentifier), j.\(destinationColumn.quotedDatabaseIdentifier), d.Z_ENT
                    FROM \(join.quotedDatabaseIdentifier) AS j LEFT JOIN \(destination.quotedDatabaseIdentifier) AS d
                    ON d.Z_PK = j.\(destinationColumn.quotedDatabaseIdentifier)
                    ORDER BY j.\(source.quotedDatabaseIdentifier), \(order)j.\(destinationColumn.quotedDatabaseIdentifier)
                    """
                relationshipSlots.append(RelationshipSlot(relationship, kind: .toMany(cursor: toMany.count), schema: store.schema))
                toMany.append(try LinkCursor(db: db, sql: sql))
            case .missing:
                continue
            }
        }
        let sql = "SELECT \(select.joined(separator: ", ")) FROM \(table) AS t \(joins.joined(separator: " ")) WHERE t.Z_ENT = ? ORDER BY t.Z_PK"
        let entityName = entity.description.name
        var lastKey: Int64?
        do {
            let statement = try db.makeStatement(sql: sql)
            let rows = try Row.fetchCursor(statement, arguments: [entity.number])
            let row = CurrentRow(statement: statement)
            // One object, refilled for each row: its arrays keep their storage when `body` keeps no copy (two
            // allocations fewer per object); a copy it keeps stays as it was (the arrays are copied on write).
            var object = ManagedObject(entity: entityName, primaryKey: 0, storeUUID: store.metadata.uuid, attributes: [], relationships: [])
            var count = 0
            while try rows.next() != nil {
                count += 1
                guard let primaryKey = row.integer(at: 0) else {
                    throw CoreDataError(
                        .corrupt,
                        "\(store.files.store): table \(entity.table) has a \(entityName) row whose Z_PK is \(row.value(at: 0))"
                            + (lastKey.map { " (after Z_PK \($0))" } ?? "") + "; Z_PK must be an integer")
                }
                lastKey = primaryKey
                try fill(&object, from: row, primaryKey: primaryKey, attributes: attributeSlots, relationships: relationshipSlots, toMany: toMany)
                try body(object)
            }
            store.noteRowsRead(count, of: entity)
        } catch let error as DatabaseError {
            throw CoreDataError(
                .corrupt,
                "\(store.files.store): SQLite failed reading table \(entity.table) (entity \(entityName))"
                    + (lastKey.map { " after Z_PK \($0)" } ?? "") + ": \(error.message ?? "\(error.resultCode)")", cause: error)
        }
    }

    /// Fills an object of the scanned entity from its row and the to-many cursors.
    ///
    /// Loops by index over slots made once per scan: binding schema structs per row copied (retained) all of their
    /// strings for every property of every object.
    private func fill(
        _ object: inout ManagedObject, from row: CurrentRow, primaryKey: Int64, attributes: [AttributeSlot], relationships: [RelationshipSlot],
        toMany: [LinkCursor]
    ) throws {
        object.primaryKey = primaryKey
        object.attributes.removeAll(keepingCapacity: true)
        object.relationships.removeAll(keepingCapacity: true)
        object.problems.removeAll()
        object.attributes.reserveCapacity(attributes.count)
        for slot in attributes.indices {
            let type = attributes[slot].type
            let value =
                attributes[slot].column.map {
                    decoder.decode(row.sqliteValue(at: $0), type: type, allowsExternalStorage: attributes[slot].allowsExternalStorage)
                } ?? .null
            switch value {
            case .unexpected(let raw):
                object.problems.append("\(attributes[slot].name): stored as \(raw.typeName), not as a \(type.xmlName)")
            case .externalData(let external) where external.size == nil:
                object.problems.append("\(attributes[slot].name): external data file \(external.uuid) is missing")
            default: break
            }
            object.attributes.append(ObjectAttribute(attributes[slot].name, consume value))
        }
        object.relationships.reserveCapacity(relationships.count)
        for slot in relationships.indices {
            switch relationships[slot].kind {
            case .toOne(let keyIndex, let entityIndex):
                let key = row.integer(at: keyIndex)
                if key == nil, case let stored = row.value(at: keyIndex), !stored.isNull {
                    object.problems.append("\(relationships[slot].name): the stored key \(stored) is not a primary key")
                }
                let target = key.map { key -> ObjectReference in
                    let number = entityIndex.flatMap { row.integer(at: $0) }.flatMap { Int(exactly: $0) }
                    return reference(to: key, number: number, slot: relationships[slot])
                }
                object.relationships.append(ObjectRelationship(relationships[slot].name, .toOne(target)))
            case .toMany(let cursor):
                // The references are made as the links are read: no list of links first.
                var targets: [ObjectReference] = []
                try toMany[cursor].forEachLink(of: primaryKey) { key, entity in
                    targets.append(reference(to: key, number: entity, slot: relationships[slot]))
                }
                object.relationships.append(ObjectRelationship(relationships[slot].name, .toMany(targets)))
            }
        }
    }

    /// A reference to a target in a relationship's destination hierarchy.
    private func reference(to key: Int64, number: Int?, slot: RelationshipSlot) -> ObjectReference {
        let name = number.map { store.schema.entityName(number: $0) ?? slot.destination } ?? slot.defaultDestination
        return ObjectReference(entity: name, primaryKey: key, storeUUID: store.metadata.uuid)
    }
}

/// What the reader needs of one attribute per row, worked out once per scan.
///
/// The parts of the description it reads, not the description: a copy of that for every attribute of every row went
/// through its type's metadata (too many members to copy inline), a few hundred instructions each.
private struct AttributeSlot {
    let name: String
    let type: AttributeType
    let allowsExternalStorage: Bool?
    /// The attribute's result column; `nil` when the table has none for it.
    let column: Int?

    init(_ description: AttributeDescription, column: Int?) {
        name = description.name
        type = description.type
        allowsExternalStorage = description.allowsExternalStorage
        self.column = column
    }
}

/// What the reader needs of one relationship per row, worked out once per scan.
private struct RelationshipSlot {
    enum Kind {
        /// The result columns of the foreign key and (when stored or joined) the target's entity number.
        case toOne(key: Int, entity: Int?)
        /// The index of the relationship's link cursor.
        case toMany(cursor: Int)
    }

    let name: String
    let kind: Kind
    /// The destination entity's model name.
    let destination: String
    /// The target entity's name when the row does not say: the destination's first entity number, else its model name.
    let defaultDestination: String

    init(_ relationship: StoreSchema.Relationship, kind: Kind, schema: StoreSchema) {
        name = relationship.description.name
        self.kind = kind
        destination = relationship.description.destination
        defaultDestination =
            schema.entityName(number: relationship.destinationNumbers.first ?? 0) ?? relationship.description.destination
    }
}

/// A cursor over (owner key, target key, target entity) rows ordered by owner key, read in step with the objects.
final class LinkCursor {
    private let rows: RowCursor
    private let row: CurrentRow
    private var pending: (owner: Int64, key: Int64, entity: Int?)?
    private var finished = false

    init(db: Database, sql: String) throws {
        let statement = try db.makeStatement(sql: sql)
        rows = try Row.fetchCursor(statement)
        row = CurrentRow(statement: statement)
    }

    /// Calls `body` with each link of one owner (the target's key and entity number); owners must be asked for in
    /// increasing order.
    func forEachLink(of owner: Int64, _ body: (_ key: Int64, _ entity: Int?) -> Void) throws {
        while true {
            if pending == nil, !finished {
                if try rows.next() != nil {
                    // A link whose keys are not integers cannot name objects: skip it.
                    guard let owner = row.integer(at: 0), let key = row.integer(at: 1) else { continue }
                    pending = (owner, key, row.integer(at: 2).flatMap { Int(exactly: $0) })
                } else {
                    finished = true
                }
            }
            guard let current = pending else { return }
            if current.owner < owner {
                pending = nil  // a link to an object of another entity in the same table (or a dangling key)
                continue
            }
            if current.owner > owner { return }
            body(current.key, current.entity)
            pending = nil
        }
    }
}
