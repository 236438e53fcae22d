import FerryCoreData
import FerryRecords

/// How one entity's objects become records, worked out once per entity.
///
/// Which properties are written, under which field names, with which plan, which side of a relationship holds it and
/// with which reference action: all of it follows from the plan and the schema alone. Looking it up by name for each
/// property of each object hashed every name several times per object, a good part of a copy's mapping time.
struct RecordProgram {
    /// One attribute, in the order the store reader gives the entity's attributes.
    struct AttributeStep {
        let name: String
        /// Not excluded by the plan (and not the identity attribute).
        let written: Bool
        let attribute: AttributeDescription?
        let plan: FieldPlan?
        let fieldName: String
    }

    /// One relationship, in the order the store reader gives the entity's relationships.
    struct RelationshipStep {
        let name: String
        /// Not excluded and known to the entity.
        let written: Bool
        let description: RelationshipDescription?
        let fieldName: String
        /// `<fieldName>Order`, for a child's position in its parent's ordered to-many relationship.
        let orderFieldName: String
        /// The positions recorded for this (child's to-one) relationship in the first pass.
        let positions: [UInt64: Int64]?
        /// This relationship's slot in the mapper's crossed-zones flags.
        let crossing: Int
        /// Whether this side writes a to-one value (a one-to-one is written on one side only).
        let holdsToOne: Bool
        /// Whether this side writes a to-many value (many-to-many on its list side, or without inverse).
        let holdsToMany: Bool
        /// The action of references written for a to-one value.
        let action: Reference.Action
    }

    let attributes: [AttributeStep]
    let relationships: [RelationshipStep]

    /// Whether the program was made for objects with exactly these properties, in this order.
    func fits(_ object: ManagedObject) -> Bool {
        guard object.attributes.count == attributes.count, object.relationships.count == relationships.count else { return false }
        for index in attributes.indices where object.attributes[index].name != attributes[index].name { return false }
        for index in relationships.indices where object.relationships[index].name != relationships[index].name { return false }
        return true
    }
}
