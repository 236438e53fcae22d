extension Collection {
    /// The collection's elements grouped by `key`, groups in the order their key first appears, each in collection order.
    ///
    /// Like `Dictionary(grouping:by:)`, but a key equal to the one before is compared, not hashed: changes and record
    /// IDs come in runs of one zone, and hashing a zone (two strings) per record was a good part of grouping them.
    @inlinable
    package func groupedInRuns<Key: Hashable>(by key: (Element) throws -> Key) rethrows -> [(key: Key, elements: [Element])] {
        var groups: [(key: Key, elements: [Element])] = []
        var slots: [Key: Int] = [:]
        var current = -1
        for element in self {
            let value = try key(element)
            if current < 0 || groups[current].key != value {
                if let slot = slots[value] {
                    current = slot
                } else {
                    current = groups.count
                    slots[value] = current
                    groups.append((value, []))
                }
            }
            groups[current].elements.append(element)
        }
        return groups
    }
}
