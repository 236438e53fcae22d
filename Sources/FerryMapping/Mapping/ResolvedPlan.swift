import FerryCoreData
import FerryRecords

/// A plan checked against a store's schema, with every default filled in, ready to apply object by object.
struct ResolvedPlan {
    /// One entity's resolved plan.
    struct Entity {
        var schema: StoreSchema.Entity
        var recordType: String
        var zone: ZoneID?
        var zoneFrom: [String]
        var name: NamePlan
        /// Attributes and relationships that are not written as fields (excluded, or the identity).
        var excluded: Set<String>
        var fields: [String: FieldPlan]
        var tombstone: TombstonePlan?
        /// The table number used in the identity index (one per root table).
        var table: Int
        /// The attributes and relationships by name, for the per-object lookups of the second pass.
        var attributesByName: [String: AttributeDescription] = [:]
        var relationshipsByName: [String: StoreSchema.Relationship] = [:]
    }

    let plan: MappingPlan
    /// Mapped entities, parents (by `zoneFrom`) before children; tombstone entities last.
    let entities: [Entity]
    let defaultZone: ZoneID
    private let tables: [String: Int]
    /// Each entity's table index, by entity name.
    private let tablesByEntity: [String: Int]
    /// Every relationship's description, by entity name and relationship name (to find inverses without copying
    /// entity descriptions per reference).
    private let relationshipsByEntity: [String: [String: RelationshipDescription]]

    init(plan: MappingPlan, schema: StoreSchema) throws(MappingError) {
        self.plan = plan
        for name in plan.entities.keys where schema.entity(named: name) == nil {
            throw MappingError(
                .unknownEntity,
                "the plan names entity \(name), which the store does not have; entities: \(schema.entities.map(\.description.name).joined(separator: ", "))"
            )
        }
        defaultZone = plan.zone.map { ZoneID(zoneName: $0) } ?? .default
        var tables: [String: Int] = [:]
        for entity in schema.entities where tables[entity.table] == nil { tables[entity.table] = tables.count }
        self.tables = tables
        var tablesByEntity: [String: Int] = [:]
        var relationshipsByEntity: [String: [String: RelationshipDescription]] = [:]
        for entity in schema.entities {
            tablesByEntity[entity.description.name] = tables[entity.table]
            for relationship in entity.relationships {
                relationshipsByEntity[entity.description.name, default: [:]][relationship.description.name] = relationship.description
            }
        }
        self.tablesByEntity = tablesByEntity
        self.relationshipsByEntity = relationshipsByEntity
        if let style = plan.style, style != "cloudkit", style != MappingPlan.coreDataMirrorStyle {
            throw MappingError(.invalidPlan, "style \(style) is not a layout; use cloudkit or \(MappingPlan.coreDataMirrorStyle)")
        }
        var resolved: [Entity] = []
        for entity in schema.entities {
            let entityPlan = plan.entities[entity.description.name] ?? EntityPlan()
            if entityPlan.skip == true { continue }
            try Self.check(entityPlan, entity: entity)
            let name = entityPlan.name ?? NamePlan()
            let identity = [name.archivedRecordID, name.systemFields, name.attribute].compactMap { $0 }
            var resolvedEntity = Entity(
                schema: entity, recordType: entityPlan.recordType ?? Self.defaultRecordType(entity, plan: plan, schema: schema),
                zone: entityPlan.zone.map { ZoneID(zoneName: $0) }, zoneFrom: entityPlan.zoneFrom ?? [], name: name,
                excluded: Set((entityPlan.exclude ?? []) + identity), fields: entityPlan.fields ?? [:], tombstone: entityPlan.tombstone,
                table: tables[entity.table] ?? 0)
            // The first of a name wins, as the linear searches these replace did.
            for attribute in entity.attributes where resolvedEntity.attributesByName[attribute.description.name] == nil {
                resolvedEntity.attributesByName[attribute.description.name] = attribute.description
            }
            for relationship in entity.relationships where resolvedEntity.relationshipsByName[relationship.description.name] == nil {
                resolvedEntity.relationshipsByName[relationship.description.name] = relationship
            }
            resolved.append(resolvedEntity)
        }
        entities = try Self.parentsFirst(resolved, schema: schema)
    }

    /// The entity name, or for NSPersistentCloudKitContainer's layout `CD_` + the root entity of its hierarchy.
    static func defaultRecordType(_ entity: StoreSchema.Entity, plan: MappingPlan, schema: StoreSchema) -> String {
        guard plan.isCoreDataMirror else { return entity.description.name }
        var root = entity.description
        var seen: Set<String> = [root.name]
        while let parent = root.parentName, let next = schema.entity(named: parent)?.description, seen.insert(parent).inserted { root = next }
        return "CD_" + root.name
    }

    /// The identity-index table number of an entity's table.
    func table(of entity: StoreSchema.Entity) -> Int? { tables[entity.table] }

    /// The table index of the entity with this name.
    func table(ofEntityNamed name: String) -> Int? { tablesByEntity[name] }

    /// A relationship of the entity with this name.
    func relationship(_ name: String, of entity: String) -> RelationshipDescription? { relationshipsByEntity[entity]?[name] }

    /// Every property the plan names must exist on the entity.
    private static func check(_ plan: EntityPlan, entity: StoreSchema.Entity) throws(MappingError) {
        let attributes = Set(entity.attributes.map(\.description.name))
        let relationships = Set(entity.relationships.map(\.description.name))
        let name = plan.name
        var named = (plan.exclude ?? []) + Array((plan.fields ?? [:]).keys)
        named += [name?.archivedRecordID, name?.systemFields, name?.attribute].compactMap { $0 }
        named += [plan.tombstone?.recordID, plan.tombstone?.recordName, plan.tombstone?.recordType].compactMap { $0 }
        for property in named where !attributes.contains(property) && !relationships.contains(property) {
            throw MappingError(
                .unknownProperty,
                "the plan for \(entity.description.name) names \(property), which it does not have; properties: \((attributes.union(relationships)).sorted().joined(separator: ", "))"
            )
        }
        for parent in plan.zoneFrom ?? [] {
            guard let relationship = entity.relationships.first(where: { $0.description.name == parent }), !relationship.description.isToMany else {
                throw MappingError(.unknownProperty, "\(entity.description.name).zoneFrom names \(parent), which is not a to-one relationship of it")
            }
        }
    }

    /// Orders entities so that each comes after the entities its `zoneFrom` relationships lead to.
    private static func parentsFirst(_ entities: [Entity], schema: StoreSchema) throws(MappingError) -> [Entity] {
        var byName: [String: Entity] = [:]
        for entity in entities { byName[entity.schema.description.name] = entity }
        func parents(of entity: Entity) -> [String] {
            entity.zoneFrom.flatMap { relationshipName -> [String] in
                guard let relationship = entity.schema.relationships.first(where: { $0.description.name == relationshipName }) else { return [] }
                return relationship.destinationNumbers.compactMap { schema.entity(number: $0)?.description.name }
            }.filter { byName[$0] != nil }
        }
        var ordered: [Entity] = []
        var state: [String: Bool] = [:]  // false: visiting, true: done
        func visit(_ entity: Entity, path: [String]) throws(MappingError) {
            let name = entity.schema.description.name
            if state[name] == true { return }
            if state[name] == false {
                throw MappingError(
                    .zoneCycle,
                    "entities take their zone from each other in a circle: \((path + [name]).joined(separator: " → ")); break it with an explicit zone"
                )
            }
            state[name] = false
            for parent in parents(of: entity) {
                guard let parentEntity = byName[parent], parent != name else { continue }
                try visit(parentEntity, path: path + [name])
            }
            state[name] = true
            ordered.append(entity)
        }
        for entity in entities.sorted(by: { $0.schema.number < $1.schema.number }) { try visit(entity, path: []) }
        return ordered.filter { $0.tombstone == nil } + ordered.filter { $0.tombstone != nil }
    }
}
