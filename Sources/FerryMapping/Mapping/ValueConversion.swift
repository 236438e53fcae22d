import FerryCoreData

/// What converting an attribute's values takes from its description and its field plan, worked out once.
///
/// Plain values: the description and the plan, passed along for every value, were copied through their types'
/// metadata (too many members to copy inline), a few hundred instructions per value.
struct ValueConversion {
    /// The attribute's name, for problems (`?` when the model does not know it).
    let attributeName: String
    /// The plan's `convert`.
    let convert: String?
    /// The plan's `asset`.
    let asset: Bool?
    /// Whether the model allows the attribute external storage.
    let allowsExternalStorage: Bool

    init(attribute: AttributeDescription?, plan: FieldPlan?) {
        attributeName = attribute?.name ?? "?"
        convert = plan?.convert
        asset = plan?.asset
        allowsExternalStorage = attribute?.allowsExternalStorage == true
    }
}
