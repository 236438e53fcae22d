import FerryCore
import FerryCoreData
import FerryPlist
import FerryRecords
import Foundation

/// Turns a Core Data store's objects into record changes by a plan, in two streaming passes.
///
/// The first pass gives every object its record name and zone (kept names first: an archived `CKRecordID`, a
/// system-fields archive, a record-name attribute; else a deterministic name) — parents before children, so a child
/// can take its parent's zone. The second pass builds the records: attributes converted to CloudKit field types,
/// to-one relationships as references (to-many ones live on the other side), many-to-many relationships as reference
/// lists, binary data as assets, and tombstone rows as deletions, which come last.
///
/// ```swift
/// let mapper = try StoreRecordMapper(store: store, plan: .preset("type-prefixed", for: store.schema), assets: assets)
/// try mapper.run { mapped in try writer.add(mapped.change) }
/// ```
public final class StoreRecordMapper {
    /// What became of one object.
    public struct Mapped: Sendable {
        /// The record or deletion.
        public var change: RecordChange
        /// The object it came from.
        public var entity: String
        public var primaryKey: Int64
        /// What could not be mapped faithfully (a reference across zones, a missing asset file, a parent conflict):
        /// the record is still written, and these are reported.
        public var problems: [String]

        /// Moves the change out, leaving an empty deletion in its place.
        ///
        /// A closure given a mapped change copies the parts it passes on (every string of a record retained, then
        /// released with the original) even when it consumes it; a swap moves.
        public mutating func takeChange() -> RecordChange {
            var taken = RecordChange.deletion(Deletion(recordType: "", recordName: ""))
            swap(&taken, &change)
            return taken
        }
    }

    /// Tuning.
    public struct Options: Sendable {
        /// Binary values larger than this become assets even when the model does not allow external storage.
        public var assetThreshold = 256 * 1024

        /// The defaults.
        public init() {}
    }

    let store: CoreDataStore
    let resolved: ResolvedPlan
    let assets: StoreAssets
    let options: Options
    private var index = IdentityIndex()
    /// Each child's position in its parent's ordered to-many relationship, by the child's to-one relationship:
    /// written as `<relationship>Order` so the order survives (CloudKit references carry none).
    private var positions: [String: [UInt64: Int64]] = [:]
    /// Problems found while identifying objects (parents in different zones), by object.
    private var identityProblems: [UInt64: [String]] = [:]
    /// Per relationship (see ``RecordProgram/RelationshipStep/crossing``): whether it was found crossing zones (and
    /// reported); from then on it holds record names.
    private var crossed: [Bool] = []
    /// Each relationship's slot in `crossed`, by `Entity.relationship`.
    private var crossingSlots: [String: Int] = [:]
    /// Called with the objects the first pass has read and their total (progress), when set.
    public var onIdentified: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    /// Per entity: objects whose kept record ID names another zone than the plan's, how many, and those zones.
    private var keptZones: [String: (count: Int, zones: Set<String>, planned: String, source: String)] = [:]
    /// Record names NSPersistentCloudKitContainer gave the objects, by entity number and primary key.
    private var mirroredNames: [UInt64: String] = [:]
    /// The ranks of the fields of the record being made (see ``record(_:entity:program:)``).
    private var ranksScratch: [Int32] = []
    /// The entity ``table(ofEntityNamed:)`` was asked for last, and its table.
    private var lastTable: (entity: String, table: Int?)?
    /// Reads the archived record IDs of the objects, most of them from the shape of one read before.
    private var recordIDs = RecordIDArchiveReader()

    /// Checks a plan against the store.
    /// - Throws: ``MappingError`` for entities or properties the store does not have, or zones taken in a circle.
    public init(store: CoreDataStore, plan: MappingPlan, assets: StoreAssets, options: Options = Options()) throws(MappingError) {
        self.store = store
        resolved = try ResolvedPlan(plan: plan, schema: store.schema)
        self.assets = assets
        self.options = options
    }

    /// The record type, zone rule and identity of each mapped entity, in the order records are produced.
    public var entityOrder: [String] { resolved.entities.map(\.schema.description.name) }

    /// Maps every object and hands each change to `body`, parents before children and deletions last.
    public func run(_ body: (consuming Mapped) throws -> Void) throws {
        index = IdentityIndex()
        positions = [:]
        identityProblems = [:]
        mirroredNames = [:]
        keptZones = [:]
        crossed = []
        crossingSlots = [:]
        if resolved.plan.isCoreDataMirror {
            try store.forEachMirroredRecordName { entity, primaryKey, name in
                mirroredNames[ObjectKey.make(entity, primaryKey)] = name
            }
        }
        let indexed = indexedEntities()
        let firstPass = resolved.entities.filter { $0.tombstone == nil && indexed.contains($0.schema.description.name) }
        let firstPassTotal = onIdentified == nil ? 0 : firstPass.reduce(0) { $0 + ((try? store.count(of: $1.schema)) ?? 0) }
        var identified = 0
        for entity in firstPass {
            let ordered = orderedOneToMany(entity)
            // The first pass reads only what identity, zones and order need.
            let needed = identityProperties(of: entity).union(ordered.map(\.0))
            try store.forEachObject(entity: entity.schema.description.name, includingSubentities: false, properties: needed) { object in
                let identity = identify(object, entity: entity)
                index.insert(table: entity.table, primaryKey: object.primaryKey, name: identity.name, zone: identity.zone)
                identified += 1
                if let onIdentified, identified & 255 == 0 { onIdentified(identified, firstPassTotal) }
                if !identity.problems.isEmpty {
                    identityProblems[objectKey(entity: object.entity, primaryKey: object.primaryKey)] = identity.problems
                }
                for (relationship, inverse) in ordered {
                    guard case .toMany(let children)? = object.relationship(relationship) else { continue }
                    for (position, child) in children.enumerated() {
                        positions[inverse, default: [:]][objectKey(entity: child.entity, primaryKey: child.primaryKey)] = Int64(position)
                    }
                }
            }
        }
        for entity in resolved.entities {
            // The second pass leaves out what is not written (identity attributes come from the first pass, if it ran).
            let all = entity.schema.attributes.map(\.description.name) + entity.schema.relationships.map(\.description.name)
            var written = entity.tombstone == nil && entity.name.systemFields == nil ? Set(all).subtracting(entity.excluded) : nil
            // Nor the side of a relationship the other side writes (a parent's to-many of children that point back):
            // reading it would walk the children's table in another order for nothing. (The Core Data mirror layout
            // writes relationships its own way.)
            if !resolved.plan.isCoreDataMirror {
                written?.subtract(entity.schema.relationships.map(\.description).filter { !writes($0, entity: entity) }.map(\.name))
            }
            // Objects the first pass did not index are named as they are read, from the same properties.
            if entity.tombstone == nil, !indexed.contains(entity.schema.description.name) { written?.formUnion(identityProperties(of: entity)) }
            // The reader gives the written properties in schema order; the program checks that before it is used.
            var program: RecordProgram? = makeProgram(
                entity, attributes: entity.schema.attributes.map(\.description.name).filter { written?.contains($0) ?? true },
                relationships: entity.schema.relationships.map(\.description.name).filter { written?.contains($0) ?? true })
            try store.forEachObject(entity: entity.schema.description.name, includingSubentities: false, properties: written) { object in
                if let tombstone = entity.tombstone {
                    if let mapped = deletion(object, entity: entity, tombstone: tombstone) { try body(mapped) }
                } else if resolved.plan.isCoreDataMirror {
                    for mapped in try mirrorRecords(object, entity: entity) { try body(mapped) }
                } else {
                    try body(try record(object, entity: entity, program: &program))
                }
            }
        }
    }

    /// The properties an object's identity is made from: its kept name, and its zone parents.
    private func identityProperties(of entity: ResolvedPlan.Entity) -> Set<String> {
        Set([entity.name.archivedRecordID, entity.name.systemFields, entity.name.attribute].compactMap { $0 } + entity.zoneFrom)
    }

    /// The entities whose objects the first pass indexes before any record is made: those that records reference
    /// (a reference needs its target's name and zone), zone parents, and the parents of ordered relationships (whose
    /// children's positions that pass collects).
    ///
    /// The others, often the most numerous (notes that no record points at), are named in the second pass as they
    /// are read, which spares reading and indexing them twice. NSPersistentCloudKitContainer's layout links records
    /// both ways, so it indexes every entity.
    private func indexedEntities() -> Set<String> {
        let mapped = resolved.entities.filter { $0.tombstone == nil }
        if resolved.plan.isCoreDataMirror { return Set(mapped.map(\.schema.description.name)) }
        var indexed: Set<String> = []
        for entity in mapped {
            if !orderedOneToMany(entity).isEmpty { indexed.insert(entity.schema.description.name) }
            for relationship in entity.schema.relationships {
                let description = relationship.description
                if !entity.zoneFrom.contains(description.name) {
                    if entity.excluded.contains(description.name) || !writes(description, entity: entity) { continue }
                }
                for number in relationship.destinationNumbers {
                    if let name = store.schema.entityName(number: number) { indexed.insert(name) }
                }
            }
        }
        return indexed
    }

    // MARK: Identity

    struct Identity {
        var name: String
        var zone: ZoneID
        var system: SystemFields?
        var problems: [String] = []
    }

    /// What the mapping did that the plan did not say, once per entity, after a run: records that kept the zone of
    /// their archived record ID instead of the plan's.
    public var notices: [String] {
        keptZones.keys.sorted().compactMap { name in
            guard let entry = keptZones[name] else { return nil }
            let zones = entry.zones.sorted().joined(separator: ", ")
            return "entity \(name): \(entry.count) records keep the zone of their kept record ID (\(zones)), not the plan's zone "
                + "\(entry.planned): a record's zone is part of its identity in CloudKit. To move them to \(entry.planned), leave "
                + "\(entry.source) out of the plan (they then get new names)"
        }
    }

    /// The record name and zone of an object (first pass).
    func identify(_ object: ManagedObject, entity: ResolvedPlan.Entity) -> Identity {
        var problems: [String] = []
        var zone: ZoneID?
        var name: String?
        var system: SystemFields?
        if let attribute = entity.name.systemFields, let fields = object.withAttribute(attribute, { Self.systemFields($0) }) {
            name = fields.recordID.recordName
            zone = ZoneID(zoneName: fields.recordID.zoneID.zoneName, ownerName: fields.recordID.zoneID.ownerName)
            system = SystemFields(
                changeTag: fields.changeTag,
                created: fields.created.map { RecordStamp(timestamp: ISO8601Timestamp.millisecondsSince1970(secondsSince2001: $0)) },
                modified: fields.modified.map { RecordStamp(timestamp: ISO8601Timestamp.millisecondsSince1970(secondsSince2001: $0)) })
        }
        if name == nil, let attribute = entity.name.archivedRecordID, let recordID = object.withAttribute(attribute, { archivedRecordID($0) }) {
            name = recordID.recordName
            zone = ZoneID(zoneName: recordID.zoneID.zoneName, ownerName: recordID.zoneID.ownerName)
        }
        if name == nil, let attribute = entity.name.attribute, case .string(let text)? = object.attribute(attribute), !text.isEmpty {
            let prefix = entity.recordType + resolved.plan.separator
            name = entity.name.addPrefix == true && !text.hasPrefix(prefix) ? prefix + text : text
        }
        if name == nil, !mirroredNames.isEmpty, let number = store.schema.entityNumber(named: object.entity) {
            name = mirroredNames[ObjectKey.make(number, object.primaryKey)]
        }
        let finalName =
            name
            ?? (resolved.plan.isCoreDataMirror
                ? RecordNaming.uuidV5("\(store.metadata.uuid)/\(object.entity)/\(object.primaryKey)").text : nil)
            ?? RecordNaming.deterministicName(
                recordType: entity.recordType, separator: resolved.plan.separator, storeUUID: store.metadata.uuid, entity: object.entity,
                primaryKey: object.primaryKey)
        if let kept = zone, let planned = entity.zone, kept != planned {
            // The kept record ID wins (a record's zone is part of its identity); said once per entity (`notices`).
            var entry = keptZones[entity.schema.description.name] ?? (0, [], planned.description, "")
            entry.count += 1
            if entry.zones.count < 5 { entry.zones.insert(kept.description) }
            entry.source = system != nil ? "name.systemFields" : "name.archivedRecordID"
            keptZones[entity.schema.description.name] = entry
        }
        if zone == nil { zone = entity.zone }
        if zone == nil, !entity.zoneFrom.isEmpty {
            var parentZones: [(String, ZoneID)] = []
            for relationshipName in entity.zoneFrom {
                guard case .toOne(let target?)? = object.relationship(relationshipName), let found = lookup(target) else { continue }
                parentZones.append((relationshipName, found.zone))
            }
            zone = parentZones.first?.1
            // Compared, not gathered in a set: this runs for every object whose zone follows its parents.
            if let first = parentZones.first, parentZones.contains(where: { $0.1 != first.1 }) {
                problems.append(
                    "parents in different zones (\(parentZones.map { "\($0.0): \($0.1)" }.joined(separator: ", "))); it goes to \(parentZones[0].1)")
            }
        }
        return Identity(name: finalName, zone: zone ?? resolved.defaultZone, system: system, problems: problems)
    }

    /// An entity's ordered to-many relationships whose inverse is a to-one: (relationship, inverse) names.
    private func orderedOneToMany(_ entity: ResolvedPlan.Entity) -> [(String, String)] {
        entity.schema.relationships.compactMap { relationship in
            let description = relationship.description
            guard description.isToMany, description.isOrdered, let inverseName = description.inverse,
                let inverse = store.schema.entity(named: description.destination)?.relationships.first(where: { $0.description.name == inverseName }),
                !inverse.description.isToMany
            else { return nil }
            return (description.name, inverseName)
        }
    }

    private func objectKey(entity: String, primaryKey: Int64) -> UInt64 {
        ObjectKey.make(table(ofEntityNamed: entity) ?? 0, primaryKey)
    }

    /// An object's identity in the second pass: from the first pass's index, unless system fields must be decoded again.
    func knownIdentity(_ object: ManagedObject, entity: ResolvedPlan.Entity) -> Identity {
        guard entity.name.systemFields == nil, let found = index.lookup(table: entity.table, primaryKey: object.primaryKey, remembering: false)
        else {
            return identify(object, entity: entity)
        }
        let problems = identityProblems[objectKey(entity: object.entity, primaryKey: object.primaryKey)] ?? []
        return Identity(name: found.name, zone: found.zone, system: nil, problems: problems)
    }

    /// The identity of a referenced object, if it is mapped.
    func lookup(_ reference: ObjectReference) -> (name: String, zone: ZoneID)? {
        guard let table = table(ofEntityNamed: reference.entity) else { return nil }
        return index.lookup(table: table, primaryKey: reference.primaryKey)
    }

    /// The table of an entity, answered for the entity asked for last without hashing its name (the references of
    /// a relationship all name the same entity).
    private func table(ofEntityNamed name: String) -> Int? {
        if let lastTable, lastTable.entity == name { return lastTable.table }
        let table = resolved.table(ofEntityNamed: name)
        lastTable = (name, table)
        return table
    }

    func archivedRecordID(_ value: borrowing ObjectValue) -> ArchivedRecordID? {
        switch value {
        case .archived(.object(let object), _):
            if case .recordID(let recordID) = object.content { return recordID }
            return nil
        case .data(let bytes), .opaque(let bytes):
            // Binary archives (all Apple writes) are read in place; other formats through a document.
            return bytes.withUnsafeBytes { buffer in
                guard BinaryPlist.hasSignature(buffer) else { return try? PlistDocument(bytes: bytes).archivedRecordID() }
                return try? recordIDs.recordID(buffer)
            }
        default:
            return nil
        }
    }

    static func systemFields(_ value: borrowing ObjectValue) -> ArchivedSystemFields? {
        switch value {
        case .archived(_, let bytes), .data(let bytes), .opaque(let bytes):
            return try? PlistDocument(bytes: bytes).archivedSystemFields()
        default:
            return nil
        }
    }

    // MARK: Records

    private func record(_ object: ManagedObject, entity: ResolvedPlan.Entity, program cached: inout RecordProgram?) throws -> Mapped {
        let identity = knownIdentity(object, entity: entity)
        var problems = identity.problems + object.problems
        let program: RecordProgram
        if let cached, cached.fits(object) {
            program = cached
        } else {
            program = makeProgram(entity, attributes: object.attributes.map(\.name), relationships: object.relationships.map(\.name))
            cached = program
        }
        // Fields are made in property order (so problems are reported in that order) and put in canonical order by
        // rank, which spares the record a sort by name.
        // The fields' ranks go in the mapper's scratch list, emptied and refilled per record (its storage stays: one
        // allocation fewer each); the fields themselves are the record's.
        var ranks = ranksScratch
        ranksScratch = []
        defer {
            ranks.removeAll(keepingCapacity: true)
            ranksScratch = ranks
        }
        let most = object.attributes.count + 2 * object.relationships.count
        ranks.reserveCapacity(most)
        var fields: [RecordFields.Field] = []
        fields.reserveCapacity(most)
        // Values read where they lie: taken out of the object's arrays, each was copied (retained, then released).
        object.attributes.withUnsafeBufferPointer { attributes in
            for index in attributes.indices where program.attributes[index].written {
                let step = program.attributes[index]
                do {
                    if let converted = try convert(attributes[index].value, as: step.conversion, problems: &problems) {
                        fields.append(RecordFields.Field(name: step.fieldName, value: consume converted))
                        ranks.append(step.rank)
                    }
                } catch {
                    problems.append("\(step.name): \(error)")
                }
            }
        }
        object.relationships.withUnsafeBufferPointer { relationships in
            for index in relationships.indices where program.relationships[index].written {
                let step = program.relationships[index]
                if let field = reference(relationships[index].value, step: step, entity: entity, zone: identity.zone, problems: &problems) {
                    fields.append(RecordFields.Field(name: step.fieldName, value: consume field))
                    ranks.append(step.rank)
                }
                if let slot = step.positions, case .toOne(.some) = relationships[index].value,
                    let position = program.positions[slot][ObjectKey.make(entity.table, object.primaryKey)]
                {
                    fields.append(RecordFields.Field(name: step.orderFieldName, value: .int64(position)))
                    ranks.append(step.orderRank)
                }
            }
        }
        RecordProgram.canonicalOrder(&fields, ranks: &ranks)
        guard let recordFields = RecordFields(unsorted: fields, duplicate: { problems.append("two properties are both written as field \($0)") })
        else {
            var unique: [String: FieldValue] = [:]
            for field in fields where unique[field.name] == nil { unique[field.name] = field.value }
            return Mapped(
                change: .record(
                    Record(
                        recordType: entity.recordType, recordName: identity.name, zoneID: identity.zone, fields: RecordFields(unique),
                        system: identity.system)), entity: object.entity, primaryKey: object.primaryKey, problems: problems)
        }
        let record = Record(
            recordType: entity.recordType, recordName: identity.name, zoneID: identity.zone, fields: recordFields, system: identity.system)
        return Mapped(change: .record(record), entity: object.entity, primaryKey: object.primaryKey, problems: problems)
    }

    /// The program for objects of `entity` with these attributes and relationships (in this order).
    private func makeProgram(_ entity: ResolvedPlan.Entity, attributes: [String], relationships: [String]) -> RecordProgram {
        let attributeSteps = attributes.map { name in
            let plan = entity.fields[name]
            return RecordProgram.AttributeStep(
                name: name, written: !entity.excluded.contains(name), attribute: entity.attributesByName[name], plan: plan,
                fieldName: plan?.rename ?? name)
        }
        var recorded: [[UInt64: Int64]] = []
        let relationshipSteps = relationships.map { name -> RecordProgram.RelationshipStep in
            let plan = entity.fields[name]
            let fieldName = plan?.rename ?? name
            let relationship = entity.relationshipsByName[name]?.description
            let crossingKey = "\(entity.schema.description.name).\(name)"
            let crossing = crossingSlots[crossingKey] ?? crossed.count
            if crossing == crossed.count {
                crossingSlots[crossingKey] = crossing
                crossed.append(false)
            }
            let held = relationship.map { holding($0, plan: plan, entity: entity) } ?? (toOne: true, toMany: true, action: .none)
            var slot: Int?
            if let found = positions[name] {
                slot = recorded.count
                recorded.append(found)
            }
            return RecordProgram.RelationshipStep(
                name: name, written: !entity.excluded.contains(name) && relationship != nil, fieldName: fieldName,
                orderFieldName: fieldName + "Order", positions: slot, crossing: crossing, holdsToOne: held.toOne,
                holdsToMany: held.toMany, action: held.action)
        }
        return RecordProgram(attributes: attributeSteps, relationships: relationshipSteps, positions: recorded)
    }

    /// Whether this side of a relationship writes it at all (the store gives a to-one relationship as one reference, a
    /// to-many one as a list).
    private func writes(_ relationship: RelationshipDescription, entity: ResolvedPlan.Entity) -> Bool {
        let held = holding(relationship, plan: entity.fields[relationship.name], entity: entity)
        return relationship.isToMany ? held.toMany : held.toOne
    }

    /// Whether this side of a relationship writes it, as a to-one value or as a to-many value, and with which action
    /// (a one-to-one is written on one side; a to-many whose inverse is to-one lives on the child; a many-to-many on
    /// its list side).
    private func holding(
        _ relationship: RelationshipDescription, plan: FieldPlan?, entity: ResolvedPlan.Entity
    ) -> (toOne: Bool, toMany: Bool, action: Reference.Action) {
        let inverse = relationship.inverse.flatMap { resolved.relationship($0, of: relationship.destination) }
        var toOne = true
        var toMany = true
        if let inverse, !inverse.isToMany, !(plan?.list ?? isOneToOneSide(relationship, inverse: inverse, entity: entity)) { toOne = false }
        if let inverse, !inverse.isToMany || !(plan?.list ?? isListSide(relationship, inverse: inverse, entity: entity)) { toMany = false }
        let defaultAction: Reference.Action = inverse?.deleteRule == .cascade ? .deleteSelf : .none
        return (toOne, toMany, plan?.action.flatMap { Reference.Action(rawValue: $0) } ?? defaultAction)
    }

    /// A relationship as a field: to-one → REFERENCE; many-to-many (on its list side) and inverse-less to-many →
    /// REFERENCE_LIST; a to-many whose inverse is to-one is written on the other side (nil here).
    ///
    /// Asked only for a step that is written, so for a relationship the entity knows.
    private func reference(
        _ value: RelationshipValue, step: RecordProgram.RelationshipStep, entity: ResolvedPlan.Entity, zone: ZoneID, problems: inout [String]
    ) -> FieldValue? {
        // Once a relationship crossed zones, it holds names everywhere after, so the field keeps one type.
        var crosses = crossed[step.crossing]
        func target(_ reference: ObjectReference) -> (name: String, zone: ZoneID)? {
            guard let found = lookup(reference) else {
                problems.append("\(step.name): \(reference.entity) p\(reference.primaryKey) is not in the copy (left out or missing)")
                return nil
            }
            if found.zone != zone {
                crosses = true
                // Reported once per relationship: every record of it crosses the same way.
                if !crossed[step.crossing] {
                    crossed[step.crossing] = true
                    problems.append(
                        "\(step.name): \(found.name) is in \(found.zone), this record in \(zone); a reference cannot cross zones, "
                            + "so \(entity.recordType).\(step.name) holds record names (STRING) wherever it does")
                }
            }
            return found
        }
        switch value {
        case .toOne(let reference):
            guard step.holdsToOne, let reference, let found = target(reference) else { return nil }
            if crosses { return .string(found.name) }
            return .reference(Reference(recordName: found.name, zoneID: found.zone, action: step.action))
        case .toMany(let references):
            guard step.holdsToMany else { return nil }
            // One pass, one array: references while none crossed, names from then on; the references written before
            // a target turned out to cross are made names after.
            var elements: [FieldValue] = []
            elements.reserveCapacity(references.count)
            var wroteReferences = false
            for reference in references {
                guard let found = target(reference) else { continue }
                if crosses {
                    elements.append(.string(found.name))
                } else {
                    elements.append(.reference(Reference(recordName: found.name, zoneID: found.zone)))
                    wroteReferences = true
                }
            }
            guard !elements.isEmpty else { return nil }
            if crosses, wroteReferences {
                elements = elements.map { if case .reference(let reference) = $0 { .string(reference.recordName) } else { $0 } }
            }
            return FieldList(crosses ? .string : .reference, elements).map(FieldValue.list)
        }
    }

    /// Whether this side of a one-to-one relationship holds the reference.
    private func isOneToOneSide(_ relationship: RelationshipDescription, inverse: RelationshipDescription, entity: ResolvedPlan.Entity) -> Bool {
        if inverse.deleteRule == .cascade { return true }
        if relationship.deleteRule == .cascade { return false }
        let mine = entity.schema.description.name
        if mine != relationship.destination { return mine < relationship.destination }
        return relationship.name <= inverse.name
    }

    /// The side of a many-to-many relationship that holds the list: the one the plan marks, else the entity (then
    /// relationship) whose name sorts first.
    private func isListSide(_ relationship: RelationshipDescription, inverse: RelationshipDescription, entity: ResolvedPlan.Entity) -> Bool {
        let destinationPlan = resolved.plan.entities[relationship.destination]?.fields?[inverse.name]
        if destinationPlan?.list == true { return false }
        let mine = entity.schema.description.name
        if mine != relationship.destination { return mine < relationship.destination }
        return relationship.name <= inverse.name
    }

    // MARK: Deletions

    private func deletion(_ object: ManagedObject, entity: ResolvedPlan.Entity, tombstone: TombstonePlan) -> Mapped? {
        var name: String?
        var zone: ZoneID?
        if let attribute = tombstone.recordID, let recordID = object.withAttribute(attribute, { archivedRecordID($0) }) {
            name = recordID.recordName
            zone = ZoneID(zoneName: recordID.zoneID.zoneName, ownerName: recordID.zoneID.ownerName)
        }
        if name == nil, let attribute = tombstone.recordName, case .string(let text)? = object.attribute(attribute), !text.isEmpty { name = text }
        guard let name else {
            return Mapped(
                change: .deletion(Deletion(recordType: entity.recordType, recordName: "", zoneID: resolved.defaultZone)), entity: object.entity,
                primaryKey: object.primaryKey, problems: ["the tombstone names no record (its record ID is empty or unreadable)"])
        }
        var recordType: String?
        if let attribute = tombstone.recordType, case .string(let text)? = object.attribute(attribute), !text.isEmpty { recordType = text }
        if recordType == nil, let range = name.range(of: resolved.plan.separator), !resolved.plan.separator.isEmpty {
            recordType = String(name[..<range.lowerBound])
        }
        let type = recordType ?? entity.recordType
        let deletionZone = zone ?? resolved.entities.first { $0.recordType == type }?.zone ?? resolved.defaultZone
        return Mapped(
            change: .deletion(Deletion(recordType: type, recordName: name, zoneID: deletionZone)), entity: object.entity,
            primaryKey: object.primaryKey, problems: object.problems)
    }
}
