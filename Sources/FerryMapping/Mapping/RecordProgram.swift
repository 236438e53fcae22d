import FerryCoreData
import FerryRecords

/// How one entity's objects become records, worked out once per entity.
///
/// Which properties are written, under which field names, with which plan, which side of a relationship holds it and
/// with which reference action: all of it follows from the plan and the schema alone. Looking it up by name for each
/// property of each object hashed every name several times per object, a good part of a copy's mapping time.
struct RecordProgram {
    /// One attribute, in the order the store reader gives the entity's attributes.
    ///
    /// A class: the mapper reads a step per property of every object, and a struct of strings and plans is copied
    /// (each member retained and released) where a class is retained once and its constant members read in place.
    final class AttributeStep {
        let name: String
        /// Not excluded by the plan (and not the identity attribute).
        let written: Bool
        let attribute: AttributeDescription?
        let plan: FieldPlan?
        let fieldName: String
        /// What converting the attribute's values takes from `attribute` and `plan`.
        let conversion: ValueConversion
        /// The field's place in canonical (name) order among the program's fields.
        fileprivate(set) var rank: Int32 = 0

        init(name: String, written: Bool, attribute: AttributeDescription?, plan: FieldPlan?, fieldName: String) {
            self.name = name
            self.written = written
            self.attribute = attribute
            self.plan = plan
            self.fieldName = fieldName
            conversion = ValueConversion(attribute: attribute, plan: plan)
        }
    }

    /// One relationship, in the order the store reader gives the entity's relationships (a class, as
    /// ``AttributeStep`` is).
    final class RelationshipStep {
        let name: String
        /// Not excluded and known to the entity.
        let written: Bool
        let description: RelationshipDescription?
        /// Whether the entity knows the relationship (`description` is set).
        let isKnown: Bool
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
        /// The places of the field and of its `Order` field in canonical (name) order among the program's fields.
        fileprivate(set) var rank: Int32 = 0
        fileprivate(set) var orderRank: Int32 = 0

        init(
            name: String, written: Bool, description: RelationshipDescription?, fieldName: String, orderFieldName: String,
            positions: [UInt64: Int64]?, crossing: Int, holdsToOne: Bool, holdsToMany: Bool, action: Reference.Action
        ) {
            self.name = name
            self.written = written
            self.description = description
            isKnown = description != nil
            self.fieldName = fieldName
            self.orderFieldName = orderFieldName
            self.positions = positions
            self.crossing = crossing
            self.holdsToOne = holdsToOne
            self.holdsToMany = holdsToMany
            self.action = action
        }
    }

    let attributes: [AttributeStep]
    let relationships: [RelationshipStep]

    /// A program for these steps, with each field's rank in canonical order worked out.
    init(attributes: [AttributeStep], relationships: [RelationshipStep]) {
        self.attributes = attributes
        self.relationships = relationships
        // Every field a step can write, by name; the slot says whose rank it is.
        enum Slot {
            case attribute(Int)
            case relationship(Int)
            case order(Int)
        }
        var names: [(name: String, slot: Slot)] = []
        for (index, step) in attributes.enumerated() { names.append((step.fieldName, .attribute(index))) }
        for (index, step) in relationships.enumerated() {
            names.append((step.fieldName, .relationship(index)))
            names.append((step.orderFieldName, .order(index)))
        }
        // Equal names (two properties written as one field) get equal ranks, so they keep the order they came in.
        names.sort { RecordFields.precedes($0.name, $1.name) }
        var rank: Int32 = 0
        for (position, entry) in names.enumerated() {
            if position > 0, entry.name != names[position - 1].name { rank += 1 }
            switch entry.slot {
            case .attribute(let index): attributes[index].rank = rank
            case .relationship(let index): relationships[index].rank = rank
            case .order(let index): relationships[index].orderRank = rank
            }
        }
    }

    /// Fields made in step order, put in canonical order by their ranks (`ranks[i]` is `fields[i]`'s), both arrays
    /// alike: an insertion sort on small integers, with no string comparisons; equal ranks keep their order.
    ///
    /// Two arrays rather than one of pairs: the fields are then the record's own, moved into place, where taking them
    /// out of pairs copied each one (every name and value retained, then released with the pairs).
    static func canonicalOrder(_ fields: inout [RecordFields.Field], ranks: inout [Int32]) {
        for index in ranks.indices.dropFirst() {
            var position = index
            while position > 0, ranks[position - 1] > ranks[position] {
                ranks.swapAt(position - 1, position)
                fields.swapAt(position - 1, position)
                position -= 1
            }
        }
    }

    /// Whether the program was made for objects with exactly these properties, in this order.
    func fits(_ object: ManagedObject) -> Bool {
        guard object.attributes.count == attributes.count, object.relationships.count == relationships.count else { return false }
        for index in attributes.indices where object.attributes[index].name != attributes[index].name { return false }
        for index in relationships.indices where object.relationships[index].name != relationships[index].name { return false }
        return true
    }
}
