import FerryPlist

/// Binary plists that readers must refuse or bound, built from tables of objects: test support.
public enum HostilePlists {
    /// Arrays nested `levels` deep around a string.
    public static func deepArrays(levels: Int) -> [UInt8] {
        var table = PlistTable()
        table.topObject = table.add(.null)
        var current = table.topObject
        for _ in 0..<levels {
            let child = table.add(.null)
            table.set(current, .array([child]))
            current = child
        }
        table.set(current, .string("bottom"))
        return BinaryPlistWriter.write(table)
    }

    /// Two arrays that hold each other.
    public static func cycle() -> [UInt8] {
        var table = PlistTable()
        let outer = table.add(.null)
        let inner = table.add(.null)
        table.set(outer, .array([inner]))
        table.set(inner, .array([outer]))
        table.topObject = outer
        return BinaryPlistWriter.write(table)
    }

    /// A fan-out: each of `levels` arrays holds the next twice, down to the string `leaf`.
    ///
    /// That is 2^levels copies of the leaf in a tree or JSON, from a file of a few hundred bytes (plus the leaf).
    /// Returns the bytes and the leaf's object number.
    public static func fanOut(leaf: String, levels: Int) -> (bytes: [UInt8], leaf: Int) {
        var table = PlistTable()
        let leafObject = table.add(.string(leaf))
        var below = leafObject
        for _ in 0..<levels { below = table.add(.array([below, below])) }
        table.topObject = below
        return (BinaryPlistWriter.write(table), leafObject)
    }
}
