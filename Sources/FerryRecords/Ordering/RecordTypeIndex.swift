/// Numbers record types in the order they are first seen, so tables over millions of records can hold a small
/// integer instead of a type name.
public struct RecordTypeIndex: Sendable {
    /// The types, by number.
    public private(set) var names: [String] = []
    private var numbers: [String: Int32] = [:]
    /// The types of the latest calls, the latest first.
    private var recent: [(name: String, index: Int32)] = []
    private static let recentLimit = 4

    /// No types yet.
    public init() {}

    /// The number of a type, given one if it is new.
    public mutating func index(of type: String) -> Int32 {
        // Records come grouped by type, or a few types alternate: most calls find a recent type and skip hashing it.
        let found = recent.withUnsafeBufferPointer { recent in recent.first { $0.name == type }?.index }
        if let found { return found }
        let index: Int32
        if let known = numbers[type] {
            index = known
        } else {
            index = Int32(names.count)
            numbers[type] = index
            names.append(type)
        }
        if recent.count == Self.recentLimit { recent.removeLast() }
        recent.insert((type, index), at: 0)
        return index
    }
}
