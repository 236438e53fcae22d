/// A record's fields, kept sorted by name (in UTF-8 byte order, the canonical order).
///
/// Behaves like a dictionary from field name to value (`fields["name"] = .string("Beetle")`), but iterates in name
/// order and needs no hashing, so encoding a record in canonical form costs no sort.
public struct RecordFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field.
    public struct Field: Sendable, Hashable {
        /// The field's name.
        public var name: String
        /// The field's value.
        public var value: FieldValue

        /// Creates a field.
        public init(name: String, value: FieldValue) {
            self.name = name
            self.value = value
        }
    }

    private var storage: [Field]

    /// No fields.
    public init() { storage = [] }

    /// Fields from a dictionary.
    public init(_ fields: [String: FieldValue]) {
        storage = fields.map { Field(name: $0.key, value: $0.value) }.sorted { Self.precedes($0.name, $1.name) }
    }

    /// Fields from a literal; a repeated name keeps its last value.
    public init(dictionaryLiteral elements: (String, FieldValue)...) {
        self.init()
        for (name, value) in elements { self[name] = value }
    }

    /// Fields from a list that may be in any order.
    /// - Returns: `nil` if a name appears twice (the first repeated name is given to `duplicate`).
    public init?(unsorted fields: consuming [Field], duplicate: ((String) -> Void)? = nil) {
        // Taken over, not copied: sorting a borrowed array would copy it, retaining every name and value.
        var sorted = consume fields
        // Canonical input is already in order; only sort when it is not.
        if !sorted.indices.dropFirst().allSatisfy({ Self.precedes(sorted[$0 - 1].name, sorted[$0].name) }) {
            sorted.sort { Self.precedes($0.name, $1.name) }
        }
        for index in sorted.indices.dropFirst() where sorted[index].name == sorted[index - 1].name {
            duplicate?(sorted[index].name)
            return nil
        }
        storage = sorted
    }

    /// The value of a field, or `nil`; setting `nil` removes the field.
    public subscript(name: String) -> FieldValue? {
        get {
            let index = position(of: name)
            return index < storage.count && storage[index].name == name ? storage[index].value : nil
        }
        set {
            let index = position(of: name)
            let exists = index < storage.count && storage[index].name == name
            switch (exists, newValue) {
            case (true, let value?): storage[index].value = value
            case (true, nil): storage.remove(at: index)
            case (false, let value?): storage.insert(Field(name: name, value: value), at: index)
            case (false, nil): break
            }
        }
    }

    /// The number of fields.
    public var count: Int { storage.count }
    /// Whether there are no fields.
    public var isEmpty: Bool { storage.isEmpty }
    /// The field names, in order.
    public var names: [String] { storage.map(\.name) }
    /// The values, in name order.
    public var values: [FieldValue] { storage.map(\.value) }

    public func makeIterator() -> IndexingIterator<[Field]> { storage.makeIterator() }

    /// Calls `body` with each reference of the fields (a reference field's, or the elements of a reference list), in
    /// name order, with the field's name (see ``forEachInPlace(_:)``).
    public func forEachReference(_ body: (_ field: String, _ reference: Reference) throws -> Void) rethrows {
        try forEachInPlace { name, value in try value.forEachReference { try body(name, $0) } }
    }

    /// Calls `body` with each asset of the fields (an asset field's, or the elements of an asset list), in name order,
    /// with the field's name (see ``forEachInPlace(_:)``).
    public func forEachAsset(_ body: (_ field: String, _ asset: Asset) throws -> Void) rethrows {
        try forEachInPlace { name, value in try value.forEachAsset { try body(name, $0) } }
    }

    /// The bytes the fields count toward a record's size (see ``Record/estimatedSize``), summed where they lie: a
    /// copy's engine asks it of every record on a thread other than the one that made it, where iterating the fields
    /// copied each one (every name and value retained, then released: a cache-line transfer each).
    var estimatedSize: Int {
        var total = 0
        forEachInPlace { name, value in total += name.utf8.count + value.estimatedSize }
        return total
    }

    /// Calls `body` with each field's name and value where they lie: iterating the fields copied (retained and
    /// released) every field of every record, where the per-record paths of a copy look for the few that matter.
    private func forEachInPlace(_ body: (_ name: String, _ value: FieldValue) throws -> Void) rethrows {
        try storage.withUnsafeBufferPointer { fields in
            for index in fields.indices { try body(fields[index].name, fields[index].value) }
        }
    }

    /// The index where `name` is or would be inserted.
    private func position(of name: String) -> Int {
        var low = 0
        var high = storage.count
        while low < high {
            let middle = (low + high) / 2
            if Self.precedes(storage[middle].name, name) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Canonical name order: UTF-8 bytes (what ``init(unsorted:duplicate:)`` sorts by).
    public static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        // Field names are native strings: compare their bytes in place, without copying either string.
        let inPlace = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                let common = Swift.min(left.count, right.count)
                for index in 0..<common where left[index] != right[index] { return left[index] < right[index] }
                return left.count < right.count
            }
        }
        return (inPlace ?? nil) ?? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}

extension RecordFields {
    /// Every asset of the fields, each with the name of its field, in field order (as ``CloudKitJSONTranscoder`` gives
    /// a line's).
    public var assetsByField: [(field: String, asset: Asset)] {
        var found: [(field: String, asset: Asset)] = []
        for field in self { field.value.forEachAsset { found.append((field.name, $0)) } }
        return found
    }
}
