/// Numbers record types in the order they are first seen, so tables over millions of records can hold a small
/// integer instead of a type name.
public struct RecordTypeIndex: Sendable {
    /// The types, by number.
    public private(set) var names: [String] = []
    private var numbers: [String: Int32] = [:]
    private var last: (name: String, index: Int32)?

    /// No types yet.
    public init() {}

    /// The number of a type, given one if it is new.
    public mutating func index(of type: String) -> Int32 {
        // Records come grouped by type: most calls repeat the last type and skip hashing it.
        if let last, last.name == type { return last.index }
        let index: Int32
        if let known = numbers[type] {
            index = known
        } else {
            index = Int32(names.count)
            numbers[type] = index
            names.append(type)
        }
        last = (type, index)
        return index
    }
}
