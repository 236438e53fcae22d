import FerryCoreData
import FerryRecords

extension MappingPlan {
    /// The presets `ferry plan` and `ferry copy --preset` know.
    public static let presetNames = ["type-prefixed", "scorebook", "plain", "nspersistentcloudkitcontainer"]

    /// The zone NSPersistentCloudKitContainer mirrors a private database into.
    public static let coreDataMirrorZone = "com.apple.coredata.cloudkit.zone"

    /// Attribute names that usually hold an archived `CKRecordID`.
    static let archivedIDNames: Set<String> = ["recordID", "ckRecordID", "cloudKitRecordID", "recordIDData"]
    /// Attribute names that usually hold a CKRecord system-fields archive.
    static let systemFieldsNames: Set<String> = ["recordData", "ckSystemFields", "systemFields", "encodedSystemFields", "serverRecordData"]
    /// Attribute names that usually hold the record name.
    static let recordNameNames: Set<String> = ["recordName", "ckRecordName", "cloudKitRecordName"]

    /// A complete plan for a store from a preset.
    ///
    /// - `type-prefixed` (seeds §1): names `<Type>.<UUID>` (kept from a `recordName` or archived `recordID`
    ///   attribute), one zone per root type (`<Type>Zone`), children in their parent's zone through the to-one
    ///   relationship whose inverse cascades, with DELETE_SELF; `Deleted…Object` entities become deletions.
    /// - `scorebook` (seeds §2): names `<Type>|~|<UUID>` from `ckRecordName`, one zone `ScorebookData`.
    /// - `plain`: deterministic names `<Type>.<UUIDv5>`, the default zone.
    /// - `nspersistentcloudkitcontainer` (cloudkit.md §3): Core Data's own mirroring layout in its zone
    ///   `com.apple.coredata.cloudkit.zone`, record names UUIDs.
    public static func preset(_ name: String, for schema: StoreSchema) throws(MappingError) -> MappingPlan {
        var plan: MappingPlan
        switch name {
        case "type-prefixed": plan = MappingPlan(preset: name, separator: ".")
        case "scorebook": plan = MappingPlan(preset: name, separator: "|~|", zone: "ScorebookData")
        case "plain": plan = MappingPlan(preset: name, separator: ".")
        case "nspersistentcloudkitcontainer":
            plan = MappingPlan(preset: name, separator: "", zone: coreDataMirrorZone, style: coreDataMirrorStyle)
        default:
            throw MappingError(.unknownPreset, "no preset \"\(name)\"; presets: \(presetNames.joined(separator: ", "))")
        }
        let parents = name == "type-prefixed" ? parentRelationships(in: schema) : [:]
        for entity in schema.entities {
            plan.entities[entity.description.name] = Self.entityPlan(entity, preset: name, parents: parents[entity.description.name] ?? [])
        }
        return plan
    }

    private static func entityPlan(_ entity: StoreSchema.Entity, preset: String, parents: [String]) -> EntityPlan {
        let attributes = entity.attributes.map(\.description)
        func attribute(in names: Set<String>) -> String? { attributes.first { names.contains($0.name) }?.name }
        var plan = EntityPlan()
        if preset == "nspersistentcloudkitcontainer" { return plan }
        if preset != "plain", let tombstone = tombstone(entity) {
            plan.tombstone = tombstone
            return plan
        }
        if preset != "plain" {
            var name = NamePlan()
            name.archivedRecordID = attribute(in: archivedIDNames)
            name.systemFields = attribute(in: systemFieldsNames)
            name.attribute = attribute(in: recordNameNames)
            if name != NamePlan() {
                plan.name = name
                plan.exclude = [name.archivedRecordID, name.systemFields, name.attribute].compactMap { $0 }.sorted()
            }
        }
        // CloudKit reserves some field names (modificationDate, recordType, …): such properties get a new name.
        let excluded = Set(plan.exclude ?? [])
        let properties = entity.attributes.map(\.description.name) + entity.relationships.map(\.description.name)
        for property in properties where RecordValidator.reservedFieldNames.contains(property) && !excluded.contains(property) {
            plan.fields = (plan.fields ?? [:]).merging([property: FieldPlan(rename: property + "Value")]) { $1 }
        }
        if preset == "type-prefixed" {
            if parents.isEmpty {
                plan.zone = "\(entity.description.name)Zone"
            } else {
                plan.zoneFrom = parents
            }
        }
        return plan
    }

    /// Each entity's parents: the to-one relationships its records take their zone from.
    ///
    /// A to-one relationship leads to a parent when the other side cascades deletes to this entity, or is a to-many
    /// (the parent owns a collection of these), or, in a model inferred without inverses, when the destination has
    /// no to-one relationship back. Cascading parents are preferred when an entity has both kinds. A relationship
    /// that would make entities take their zones from each other in a circle is left out (the entity visited later
    /// by name keeps its own zone).
    static func parentRelationships(in schema: StoreSchema) -> [String: [String]] {
        var candidates: [String: [(relationship: String, destination: String)]] = [:]
        for entity in schema.entities {
            var cascading: [(String, String)] = []
            var owning: [(String, String)] = []
            for relationship in entity.relationships.map(\.description) where !relationship.isToMany {
                guard let destination = schema.entity(named: relationship.destination) else { continue }
                let destinationName = destination.description.name
                if destinationName == entity.description.name { continue }
                if let inverseName = relationship.inverse {
                    guard let inverse = destination.relationships.first(where: { $0.description.name == inverseName })?.description else { continue }
                    if inverse.deleteRule == .cascade {
                        cascading.append((relationship.name, destinationName))
                    } else if inverse.isToMany {
                        owning.append((relationship.name, destinationName))
                    }
                } else {
                    let pointsBack = destination.relationships.contains {
                        !$0.description.isToMany && $0.description.destination == entity.description.name
                    }
                    if !pointsBack { owning.append((relationship.name, destinationName)) }
                }
            }
            let chosen = cascading.isEmpty ? owning : cascading
            if !chosen.isEmpty { candidates[entity.description.name] = chosen.sorted { $0.0 < $1.0 } }
        }
        // Keep an edge only when the destination does not already reach this entity through kept edges.
        var kept: [String: [(relationship: String, destination: String)]] = [:]
        func reaches(_ start: String, _ target: String) -> Bool {
            var stack = [start]
            var seen: Set<String> = []
            while let next = stack.popLast() {
                if next == target { return true }
                guard seen.insert(next).inserted else { continue }
                stack += (kept[next] ?? []).map(\.destination)
            }
            return false
        }
        for entity in candidates.keys.sorted() {
            for edge in candidates[entity] ?? [] where !reaches(edge.destination, entity) {
                kept[entity, default: []].append(edge)
            }
        }
        return kept.mapValues { $0.map(\.relationship) }
    }

    /// A tombstone entity: named `Deleted…`, or with only a record-ID attribute and a record-type attribute.
    static func tombstone(_ entity: StoreSchema.Entity) -> TombstonePlan? {
        let names = Set(entity.attributes.map(\.description.name))
        guard entity.relationships.isEmpty else { return nil }
        let idAttribute = names.intersection(archivedIDNames).sorted().first
        let nameAttribute = names.intersection(recordNameNames).sorted().first
        guard idAttribute != nil || nameAttribute != nil else { return nil }
        let looksDeleted = entity.description.name.lowercased().hasPrefix("deleted") || entity.description.name.lowercased().contains("tombstone")
        guard looksDeleted else { return nil }
        return TombstonePlan(recordID: idAttribute, recordName: nameAttribute, recordType: names.contains("recordType") ? "recordType" : nil)
    }
}
