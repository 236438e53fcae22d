extension FieldValue {
    /// Calls `body` with each reference in this value (itself, or the elements of a reference list) where it lies:
    /// unlike ``references``, no array is made for them (the per-record paths of a copy ask every field).
    public func forEachReference(_ body: (Reference) throws -> Void) rethrows {
        try forEach(.reference, { if case .reference(let reference) = $0 { reference } else { nil } }, body)
    }

    /// The references in this value: itself, or the elements of a reference list.
    public var references: [Reference] {
        var references: [Reference] = []
        forEachReference { references.append($0) }
        return references
    }

    /// Calls `body` with each asset in this value (itself, or the elements of an asset list) where it lies.
    public func forEachAsset(_ body: (Asset) throws -> Void) rethrows {
        try forEach(.asset, { if case .asset(let asset) = $0 { asset } else { nil } }, body)
    }

    /// The assets in this value: itself, or the elements of an asset list.
    public var assets: [Asset] {
        var assets: [Asset] = []
        forEachAsset { assets.append($0) }
        return assets
    }

    /// Calls `body` with what `element` finds in this value itself, or in each element of a list of `type`.
    private func forEach<Element>(_ type: ScalarType, _ element: (FieldValue) -> Element?, _ body: (Element) throws -> Void) rethrows {
        if case .list(let list) = self {
            guard list.elementType == type else { return }
            for value in list.elements { if let found = element(value) { try body(found) } }
        } else if let found = element(self) {
            try body(found)
        }
    }
}
