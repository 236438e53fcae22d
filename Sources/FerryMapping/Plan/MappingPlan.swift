/// How a source's objects become records: record types, names, zones, fields and references, per entity.
///
/// A plan is what `ferry plan` writes as YAML for a person to read and edit, and what `ferry copy --mapping` reads.
/// Anything a plan leaves out takes the default noted on each property.
public struct MappingPlan: Codable, Sendable, Equatable {
    /// The preset the plan started from (informational).
    public var preset: String?
    /// Between the record type and the identifier in names Ferry makes (`Car.<UUID>`, `SBGame|~|<UUID>`).
    public var separator: String
    /// The zone of every record whose entity names none (default: the default zone, `_defaultZone`).
    public var zone: String?
    /// The plan of each entity, by entity name; an entity without one is mapped with the defaults.
    public var entities: [String: EntityPlan]
    /// The record layout: `cloudkit` (default: references, lists, type-prefixed names) or
    /// `nspersistentcloudkitcontainer` (Core Data's mirroring layout: `CD_` record types and fields, relationships
    /// as record-name strings, `CDMR` records for many-to-many, large values in `CD_<attr>_ckAsset`, UUID names).
    public var style: String?

    /// Creates a plan.
    public init(preset: String? = nil, separator: String = ".", zone: String? = nil, entities: [String: EntityPlan] = [:], style: String? = nil) {
        self.preset = preset
        self.separator = separator
        self.zone = zone
        self.entities = entities
        self.style = style
    }

    /// Reads a plan; the keys a plan may leave out take their defaults (`separator` `.`, no entities).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        preset = try container.decodeIfPresent(String.self, forKey: .preset)
        separator = try container.decodeIfPresent(String.self, forKey: .separator) ?? "."
        zone = try container.decodeIfPresent(String.self, forKey: .zone)
        entities = try container.decodeIfPresent([String: EntityPlan].self, forKey: .entities) ?? [:]
        style = try container.decodeIfPresent(String.self, forKey: .style)
    }

    /// Whether records take NSPersistentCloudKitContainer's layout.
    public var isCoreDataMirror: Bool { style == Self.coreDataMirrorStyle }

    /// The `style` of NSPersistentCloudKitContainer's layout.
    public static let coreDataMirrorStyle = "nspersistentcloudkitcontainer"
}

/// How one entity's objects become records.
public struct EntityPlan: Codable, Sendable, Equatable {
    /// Leave the entity out (local-only data).
    public var skip: Bool?
    /// The record type (default: the entity name).
    public var recordType: String?
    /// The zone (default: the plan's zone).
    public var zone: String?
    /// To-one relationships to parents whose zone the record shares, tried in order: a reference cannot cross zones.
    public var zoneFrom: [String]?
    /// Where the record name comes from (default: a deterministic name).
    public var name: NamePlan?
    /// Attributes and relationships not exported.
    public var exclude: [String]?
    /// Per-property choices, by attribute or relationship name.
    public var fields: [String: FieldPlan]?
    /// The entity's rows are deletions of other records (offline-delete tombstones).
    public var tombstone: TombstonePlan?

    /// Creates an entity plan.
    public init(
        skip: Bool? = nil, recordType: String? = nil, zone: String? = nil, zoneFrom: [String]? = nil, name: NamePlan? = nil,
        exclude: [String]? = nil, fields: [String: FieldPlan]? = nil, tombstone: TombstonePlan? = nil
    ) {
        self.skip = skip
        self.recordType = recordType
        self.zone = zone
        self.zoneFrom = zoneFrom
        self.name = name
        self.exclude = exclude
        self.fields = fields
        self.tombstone = tombstone
    }
}

/// Where a record's name comes from; the first source that has a value wins, then a deterministic name.
public struct NamePlan: Codable, Sendable, Equatable {
    /// An attribute holding an archived `CKRecordID` (its record name and zone are kept).
    public var archivedRecordID: String?
    /// An attribute holding a CKRecord system-fields archive (name, zone and change tag are kept).
    public var systemFields: String?
    /// A string attribute holding the record name.
    public var attribute: String?
    /// Whether a name from `attribute` gets the `<recordType><separator>` prefix when it lacks it.
    public var addPrefix: Bool?

    /// Creates a name plan.
    public init(archivedRecordID: String? = nil, systemFields: String? = nil, attribute: String? = nil, addPrefix: Bool? = nil) {
        self.archivedRecordID = archivedRecordID
        self.systemFields = systemFields
        self.attribute = attribute
        self.addPrefix = addPrefix
    }
}

/// Choices for one attribute or relationship.
public struct FieldPlan: Codable, Sendable, Equatable {
    /// The field name (default: the property name).
    public var rename: String?
    /// Write binary data as an ASSET (default: when the attribute allows external storage, or the value is over
    /// `assetThreshold` bytes).
    public var asset: Bool?
    /// A reference's action: `NONE`, `DELETE_SELF` or `VALIDATE` (default: DELETE_SELF for a `zoneFrom` parent whose
    /// delete rule cascades to this record, else NONE).
    public var action: String?
    /// A value conversion: `string` (Decimal, UUID, URI as text), `double` (Decimal), `bytes` (as stored),
    /// `rgba` (a color stored as `"r,g,b,a"` text → a list of doubles).
    public var convert: String?
    /// For a many-to-many relationship (a REFERENCE_LIST) or a one-to-one relationship (a REFERENCE): whether this
    /// side holds it (default: for one-to-one the dependent side, whose inverse cascades; otherwise the side whose
    /// entity sorts first).
    public var list: Bool?

    /// Creates a field plan.
    public init(rename: String? = nil, asset: Bool? = nil, action: String? = nil, convert: String? = nil, list: Bool? = nil) {
        self.rename = rename
        self.asset = asset
        self.action = action
        self.convert = convert
        self.list = list
    }
}

/// A tombstone entity: each row deletes the record it names.
public struct TombstonePlan: Codable, Sendable, Equatable {
    /// The attribute holding the deleted record's archived `CKRecordID`.
    public var recordID: String?
    /// The attribute holding the deleted record's name as text (when there is no archive).
    public var recordName: String?
    /// The attribute holding the deleted record's type (default: the part of its name before the separator).
    public var recordType: String?

    /// Creates a tombstone plan.
    public init(recordID: String? = nil, recordName: String? = nil, recordType: String? = nil) {
        self.recordID = recordID
        self.recordName = recordName
        self.recordType = recordType
    }
}
