extension FieldValue {
    /// Calls `body` with each reference in this value (itself, or the elements of a reference list) where it lies:
    /// unlike ``references``, no array is made for them (the per-record paths of a copy ask every field).
    public func forEachReference(_ body: (Reference) throws -> Void) rethrows {
        switch self {
        case .reference(let reference): try body(reference)
        case .list(let list) where list.elementType == .reference:
            for element in list.elements { if case .reference(let reference) = element { try body(reference) } }
        default: break
        }
    }

    /// The references in this value: itself, or the elements of a reference list.
    public var references: [Reference] {
        var references: [Reference] = []
        forEachReference { references.append($0) }
        return references
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
