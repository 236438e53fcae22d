/// Where a model's entities, attributes and relationships go in a Core Data store (formats.md §1.4–1.6).
struct StoreLayout {
    struct Column {
        var name: String
        var sqlType: String
        var isForeignKey = false
    }

    struct Table {
        var name: String
        var columns: [Column] = []
        var entityCount = 0
    }

    /// A to-one relationship's foreign key (and entity column when the destination has sub-entities).
    struct ToOne {
        var relationship: String
        var column: String
        var entityColumn: String?
    }

    /// The ordering key of an ordered to-many relationship, kept on the member's row beside its to-one inverse.
    struct Ordering {
        var toMany: String
        var toOne: String
        var column: String
    }

    struct JoinTable {
        var name: String
        var sourceEntity: String
        var relationship: String
        var inverse: String?
        var sourceColumn: String
        var destinationColumn: String
        var sourceOrderColumn: String?
        var destinationOrderColumn: String?
    }

    /// Entities in `Z_ENT` order: a pre-order walk of the inheritance forest, siblings by name.
    let ordered: [EntitySpec]
    private let numbers: [String: Int]
    private let byName: [String: EntitySpec]
    private(set) var tables: [Table] = []
    private(set) var joinTables: [JoinTable] = []
    private var attributeColumn: [String: [String: String]] = [:]
    private var toOnes: [String: [ToOne]] = [:]
    private var orderings: [String: [Ordering]] = [:]

    init(entities: [EntitySpec]) {
        byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var ordered: [EntitySpec] = []
        func visit(_ entity: EntitySpec) {
            ordered.append(entity)
            for child in entities.filter({ $0.parent == entity.name }).sorted(by: { $0.name < $1.name }) { visit(child) }
        }
        for root in entities.filter({ $0.parent == nil }).sorted(by: { $0.name < $1.name }) { visit(root) }
        self.ordered = ordered
        numbers = Dictionary(ordered.enumerated().map { ($1.name, $0 + 1) }, uniquingKeysWith: { first, _ in first })
        layOutTables()
        layOutJoinTables()
    }

    func number(of entity: String) -> Int { numbers[entity] ?? 0 }

    func root(of entity: String) -> String {
        var current = entity
        while let parent = byName[current]?.parent { current = parent }
        return current
    }

    func table(of entity: String) -> String { "Z" + root(of: entity).uppercased() }

    /// The entity and its ancestors, the entity first.
    func ancestry(of entity: String) -> [EntitySpec] {
        var result: [EntitySpec] = []
        var current = byName[entity]
        while let spec = current {
            result.append(spec)
            current = spec.parent.flatMap { byName[$0] }
        }
        return result
    }

    func entity(_ entity: String, isA ancestor: String) -> Bool { ancestry(of: entity).contains { $0.name == ancestor } }

    func hasSubentities(_ entity: String) -> Bool { ordered.contains { $0.parent == entity } }

    func relationship(_ name: String, of entity: String) -> RelationshipSpec? {
        for spec in ancestry(of: entity) { if let found = spec.relationships.first(where: { $0.name == name }) { return found } }
        return nil
    }

    func attributeColumns(of entity: String) -> [(String, String)] {
        ancestry(of: entity).reversed().flatMap { spec in
            spec.attributes.compactMap { attribute in attributeColumn[spec.name]?[attribute.name].map { (attribute.name, $0) } }
        }
    }

    func toOneColumns(of entity: String) -> [ToOne] { ancestry(of: entity).reversed().flatMap { toOnes[$0.name] ?? [] } }

    func orderColumns(of entity: String) -> [Ordering] { ancestry(of: entity).reversed().flatMap { orderings[$0.name] ?? [] } }

    private static func sqlType(_ attributeType: String) -> String {
        switch attributeType {
        case "Integer 16", "Integer 32", "Integer 64", "Boolean": "INTEGER"
        case "Decimal": "DECIMAL"
        case "Double", "Float": "FLOAT"
        case "String", "URI": "VARCHAR"
        case "Date": "TIMESTAMP"
        default: "BLOB"
        }
    }

    private mutating func layOutTables() {
        var tableIndex: [String: Int] = [:]
        var used: [String: Set<String>] = [:]
        func allocate(_ base: String, in table: String) -> String {
            var name = base
            var suffix = 0
            while used[table, default: []].contains(name) {
                suffix += 1
                name = "\(base)\(suffix)"
            }
            used[table, default: []].insert(name)
            return name
        }
        for entity in ordered {
            let tableName = table(of: entity.name)
            if tableIndex[tableName] == nil {
                tableIndex[tableName] = tables.count
                tables.append(Table(name: tableName))
            }
            guard let index = tableIndex[tableName] else { continue }
            tables[index].entityCount += 1
            for relationship in entity.relationships where !relationship.isToMany {
                let column = allocate("Z" + relationship.name.uppercased(), in: tableName)
                tables[index].columns.append(Column(name: column, sqlType: "INTEGER", isForeignKey: true))
                var entityColumn: String?
                if hasSubentities(relationship.destination) {
                    let name = allocate("Z\(number(of: relationship.destination))_" + relationship.name.uppercased(), in: tableName)
                    tables[index].columns.append(Column(name: name, sqlType: "INTEGER"))
                    entityColumn = name
                }
                toOnes[entity.name, default: []].append(ToOne(relationship: relationship.name, column: column, entityColumn: entityColumn))
                // An ordered to-many inverse keeps its order on this row.
                if let inverse = relationship.inverse, let owner = self.relationship(inverse, of: relationship.destination), owner.isToMany,
                    owner.isOrdered
                {
                    let order = allocate("Z_FOK_" + relationship.name.uppercased(), in: tableName)
                    tables[index].columns.append(Column(name: order, sqlType: "INTEGER"))
                    orderings[entity.name, default: []].append(Ordering(toMany: inverse, toOne: relationship.name, column: order))
                }
            }
            for attribute in entity.attributes {
                let column = allocate("Z" + attribute.name.uppercased(), in: tableName)
                tables[index].columns.append(Column(name: column, sqlType: Self.sqlType(attribute.type)))
                attributeColumn[entity.name, default: [:]][attribute.name] = column
            }
        }
    }

    /// The entity that declares a relationship reachable from `entity`.
    private func declaring(_ name: String, from entity: String) -> String? {
        ancestry(of: entity).first { spec in spec.relationships.contains { $0.name == name } }?.name
    }

    private mutating func layOutJoinTables() {
        var handled: Set<String> = []
        var names: Set<String> = []
        for entity in ordered {
            for relationship in entity.relationships where relationship.isToMany {
                let key = "\(entity.name).\(relationship.name)"
                if handled.contains(key) { continue }
                let inverse = relationship.inverse.flatMap { self.relationship($0, of: relationship.destination) }
                if let inverse, !inverse.isToMany { continue }  // one-to-many: a foreign key on the destination
                handled.insert(key)
                let n = number(of: entity.name)
                let r = relationship.name.uppercased()
                var join: JoinTable
                if let inverse, let inverseOwner = declaring(inverse.name, from: relationship.destination) {
                    handled.insert("\(inverseOwner).\(inverse.name)")
                    let m = number(of: inverseOwner)
                    if inverseOwner == entity.name && inverse.name == relationship.name {
                        join = JoinTable(
                            name: "Z_\(n)\(r)", sourceEntity: entity.name, relationship: relationship.name, inverse: inverse.name,
                            sourceColumn: "Z_\(n)\(r)", destinationColumn: "REFLEXIVE")
                    } else {
                        join = JoinTable(
                            name: "Z_\(n)\(r)", sourceEntity: entity.name, relationship: relationship.name, inverse: inverse.name,
                            sourceColumn: "Z_\(n)\(inverse.name.uppercased())", destinationColumn: "Z_\(m)\(r)")
                        if inverse.isOrdered { join.sourceOrderColumn = "Z_FOK_" + join.sourceColumn.dropFirst(2) }
                    }
                } else {
                    let m = number(of: relationship.destination)
                    join = JoinTable(
                        name: "Z_\(n)\(r)", sourceEntity: entity.name, relationship: relationship.name, inverse: nil,
                        sourceColumn: "Z_\(n)\(r)", destinationColumn: m == n ? "REFLEXIVE" : "Z_\(m)\(r)")
                }
                if relationship.isOrdered { join.destinationOrderColumn = "Z_FOK_" + join.destinationColumn.dropFirst(2) }
                var name = join.name
                var suffix = 0
                while names.contains(name) {
                    suffix += 1
                    name = "\(join.name)\(suffix)"
                }
                names.insert(name)
                join.name = name
                joinTables.append(join)
            }
        }
    }
}
