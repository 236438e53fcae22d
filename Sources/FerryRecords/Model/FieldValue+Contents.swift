extension FieldValue {
    /// The references in this value: itself, or the elements of a reference list.
    public var references: [Reference] {
        switch self {
        case .reference(let reference): [reference]
        case .list(let list) where list.elementType == .reference:
            list.elements.compactMap { if case .reference(let reference) = $0 { reference } else { nil } }
        default: []
        }
    }

    /// The assets in this value: itself, or the elements of an asset list.
    public var assets: [Asset] {
        switch self {
        case .asset(let asset): [asset]
        case .list(let list) where list.elementType == .asset:
            list.elements.compactMap { if case .asset(let asset) = $0 { asset } else { nil } }
        default: []
        }
    }
}
