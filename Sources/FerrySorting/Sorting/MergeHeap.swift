import FerryCore

/// A binary min-heap of the heads of sorted runs, for a k-way merge: each value taken costs about log₂ k comparisons
/// where a linear search for the smallest head costs k.
@usableFromInline
struct MergeHeap<Element: Comparable, Source> {
    @usableFromInline var nodes: [(element: Element, source: Source)] = []

    @inlinable
    init() {}

    /// The smallest head and its run, if any.
    @inlinable
    var top: (Element, Source)? { nodes.first.map { ($0.element, $0.source) } }

    /// Adds a run's head.
    @inlinable
    mutating func insert(_ element: Element, _ source: Source) {
        nodes.append((element, source))
        var child = nodes.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard nodes[child].element < nodes[parent].element else { break }
            nodes.swapAt(child, parent)
            child = parent
        }
    }

    /// Replaces the smallest head with the next value of its run.
    @inlinable
    mutating func replaceTop(_ element: Element) {
        nodes[0].element = element
        siftDown(from: 0)
    }

    /// Removes the smallest head (its run is done).
    @inlinable
    mutating func removeTop() {
        let last = nodes.removeLast()
        guard !nodes.isEmpty else { return }
        nodes[0] = last
        siftDown(from: 0)
    }

    @inlinable
    mutating func siftDown(from start: Int) {
        var parent = start
        let count = nodes.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            let right = left + 1
            let child = right < count && nodes[right].element < nodes[left].element ? right : left
            guard nodes[child].element < nodes[parent].element else { return }
            nodes.swapAt(child, parent)
            parent = child
        }
    }
}
