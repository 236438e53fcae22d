import FerryCore
import FerryCoreData
import FerryRecords
import Foundation

extension StoreRecordMapper {
    /// NSPersistentCloudKitContainer's inline limit: a value stays in the record while the record with it stays within
    /// 700 000 bytes, else it moves to `CD_<attribute>_ckAsset` (reverse-engineered, cloudkit.md §3).
    static let mirrorInlineLimit = 700_000

    /// One object in NSPersistentCloudKitContainer's layout (cloudkit.md §3), and the `CDMR` records of the
    /// many-to-many relationships this side writes.
    ///
    /// Fields are `CD_<attribute>` plus `CD_entityName`; to-one relationships are `CD_<relationship>` strings holding
    /// the related record's name (both sides of a one-to-one); to-many relationships live on the other side; each
    /// many-to-many link is a `CDMR` record naming both records, entities and relationships, ordered by entity name.
    func mirrorRecords(_ object: ManagedObject, entity: ResolvedPlan.Entity) throws -> [Mapped] {
        let identity = knownIdentity(object, entity: entity)
        var problems = identity.problems + object.problems
        var fields: [String: FieldValue] = ["CD_entityName": .string(object.entity)]
        var size = 200 + entity.recordType.utf8.count + identity.name.utf8.count
        var links: [Record] = []
        for property in object.attributes where !entity.excluded.contains(property.name) {
            let (name, value) = (property.name, property.value)
            let attribute = entity.attributesByName[name]
            let plan = entity.fields[name]
            let fieldName = "CD_" + (plan?.rename ?? name)
            do {
                if let length = Self.variableLength(value), size + length > Self.mirrorInlineLimit || plan?.asset == true {
                    fields[fieldName + "_ckAsset"] = try mirrorAsset(value)
                    continue
                }
                // Small enough to stay inline, whatever the model says about external storage.
                var inline = plan ?? FieldPlan()
                inline.asset = false
                let converted: FieldValue
                if case .archived(_, let bytes) = value {
                    converted = .bytes(Data(bytes))  // transformables are Data in Core Data's mirror
                } else if let value = try convert(value, as: ValueConversion(attribute: attribute, plan: inline), problems: &problems) {
                    converted = value
                } else {
                    continue
                }
                size += converted.estimatedSize + fieldName.utf8.count
                fields[fieldName] = converted
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        for property in object.relationships where !entity.excluded.contains(property.name) {
            let (name, value) = (property.name, property.value)
            guard let relationship = entity.relationshipsByName[name]?.description else { continue }
            let fieldName = "CD_" + (entity.fields[name]?.rename ?? name)
            let inverse = relationship.inverse.flatMap { resolved.relationship($0, of: relationship.destination) }
            switch value {
            case .toOne(let reference):
                guard let reference else { continue }
                guard let target = lookup(reference) else {
                    problems.append("\(name): \(reference.entity) p\(reference.primaryKey) is not in the copy (left out or missing)")
                    continue
                }
                fields[fieldName] = .string(target.name)
            case .toMany(let references):
                guard let inverse else {
                    problems.append("\(name): NSPersistentCloudKitContainer needs an inverse for every relationship; left out")
                    continue
                }
                guard inverse.isToMany else { continue }  // stored on the other side
                for reference in references {
                    guard let target = lookup(reference) else {
                        problems.append("\(name): \(reference.entity) p\(reference.primaryKey) is not in the copy (left out or missing)")
                        continue
                    }
                    let mine = (entity: object.entity, name: identity.name, relationship: name)
                    let theirs = (entity: reference.entity, name: target.name, relationship: inverse.name)
                    guard (mine.entity, mine.relationship, mine.name) <= (theirs.entity, theirs.relationship, theirs.name) else { continue }
                    links.append(Self.linkRecord(mine, theirs, zone: identity.zone))
                }
            }
        }
        let record = Record(
            recordType: entity.recordType, recordName: identity.name, zoneID: identity.zone, fields: RecordFields(fields), system: identity.system)
        return [Mapped(change: .record(record), entity: object.entity, primaryKey: object.primaryKey, problems: problems)]
            + links.map { Mapped(change: .record($0), entity: object.entity, primaryKey: object.primaryKey, problems: []) }
    }

    /// A `CDMR` record for one many-to-many link, its parts ordered by entity name.
    static func linkRecord(
        _ first: (entity: String, name: String, relationship: String), _ second: (entity: String, name: String, relationship: String),
        zone: ZoneID
    ) -> Record {
        let (a, b) = first.entity <= second.entity ? (first, second) : (second, first)
        let name = RecordNaming.uuidV5("CDMR/\(a.name)/\(a.relationship)/\(b.name)/\(b.relationship)").text
        return Record(
            recordType: "CDMR", recordName: name, zoneID: zone,
            fields: [
                "CD_entityNames": .string("\(a.entity):\(b.entity)"), "CD_recordNames": .string("\(a.name):\(b.name)"),
                "CD_relationships": .string("\(a.relationship):\(b.relationship)"),
            ])
    }

    /// The length of a variable-length value that may move to an asset (binary data, transformables, strings).
    static func variableLength(_ value: ObjectValue) -> Int? {
        switch value {
        case .data(let bytes), .opaque(let bytes), .archived(_, let bytes), .plist(_, let bytes): bytes.count
        case .string(let text): text.utf8.count
        case .externalData(let external): external.size.map { Int($0) }
        default: nil
        }
    }

    private func mirrorAsset(_ value: ObjectValue) throws -> FieldValue {
        switch value {
        case .externalData(let external):
            guard let path = external.path else { throw MappingError(.invalidPlan, "external data file \(external.uuid) is missing") }
            return .asset(try assets.addFile(path))
        case .data(let bytes), .opaque(let bytes), .archived(_, let bytes), .plist(_, let bytes): return .asset(try assets.addBytes(bytes))
        case .string(let text): return .asset(try assets.addBytes(Array(text.utf8)))
        default: throw MappingError(.invalidPlan, "only variable-length values move to assets")
        }
    }
}
