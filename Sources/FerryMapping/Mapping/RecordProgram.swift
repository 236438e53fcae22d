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
    /// Plain values the mapper reads for every property of every object: names (short enough, mostly, to be held
    /// inline), flags and numbers. As a class, each step was retained and released per property per object, atomic
    /// operations the reading thread (which a second copy waits for) spent 4 % of its time on; a description or a
    /// plan held here would be copied through its type's metadata instead.
    struct AttributeStep {
        let name: String
        /// Not excluded by the plan (and not the identity attribute).
        let written: Bool
        let fieldName: String
        /// What converting the attribute's values takes from its description and plan.
        let conversion: ValueConversion
        /// The field's place in canonical (name) order among the program's fields.
        fileprivate(set) var rank: Int32 = 0

        init(name: String, written: Bool, attribute: AttributeDescription?, plan: FieldPlan?, fieldName: String) {
            self.name = name
            self.written = written
            self.fieldName = fieldName
            conversion = ValueConversion(attribute: attribute, plan: plan)
        }
    }

    /// One relationship, in the order the store reader gives the entity's relationships (plain values, as
    /// ``AttributeStep`` is).
    struct RelationshipStep {
        let name: String
        /// Not excluded and known to the entity.
        let written: Bool
        let fieldName: String
        /// `<fieldName>Order`, for a child's position in its parent's ordered to-many relationship.
        let orderFieldName: String
        /// Where the positions recorded for this (child's to-one) relationship in the first pass are, in the program's
        /// ``RecordProgram/positions``.
        let positions: Int?
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
            name: String, written: Bool, fieldName: String, orderFieldName: String, positions: Int?, crossing: Int, holdsToOne: Bool,
            holdsToMany: Bool, action: Reference.Action
        ) {
            self.name = name
            self.written = written
            self.fieldName = fieldName
            self.orderFieldName = orderFieldName
            self.positions = positions
            self.crossing = crossing
            self.holdsToOne = holdsToOne
            self.holdsToMany = holdsToMany
            self.action = action
        }
    }

    private(set) var attributes: [AttributeStep]
    private(set) var relationships: [RelationshipStep]
    /// The positions the first pass recorded for the relationships that have them (``RelationshipStep/positions``).
    let positions: [[UInt64: Int64]]

    /// A program for these steps, with each field's rank in canonical order worked out.
    init(attributes: [AttributeStep], relationships: [RelationshipStep], positions: [[UInt64: Int64]] = []) {
        self.attributes = attributes
        self.relationships = relationships
        self.positions = positions
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
            case .attribute(let index): self.attributes[index].rank = rank
            case .relationship(let index): self.relationships[index].rank = rank
            case .order(let index): self.relationships[index].orderRank = rank
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
