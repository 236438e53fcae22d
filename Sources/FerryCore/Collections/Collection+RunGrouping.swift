extension Collection {
    /// The collection's indices grouped by `key`, groups in the order their key first appears, each in collection order.
    ///
    /// Like `Dictionary(grouping:by:)` over the indices, but a key equal to the one before is compared, not hashed: the
    /// changes of a copy's round come in runs of one zone, and hashing a zone (two strings) per record was a good part
    /// of grouping them.
    @inlinable
    package func indicesGroupedInRuns<Key: Hashable>(by key: (Element) throws -> Key) rethrows -> [(key: Key, indices: [Index])] {
        var groups: [(key: Key, indices: [Index])] = []
        var slots: [Key: Int] = [:]
        var current = -1
        for index in indices {
            let value = try key(self[index])
            if current < 0 || groups[current].key != value {
                if let slot = slots[value] {
                    current = slot
                } else {
                    current = groups.count
                    slots[value] = current
                    groups.append((value, []))
                }
            }
            groups[current].indices.append(index)
        }
        return groups
    }
}
