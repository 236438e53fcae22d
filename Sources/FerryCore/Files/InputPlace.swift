/// Where a change came from among the files a run reads: the file, the line, and the item on that line.
///
/// Most lines hold one record (item 0); a CloudKit `records/modify` request holds several operations, which may share
/// a line. The place packs into one number that rises through the reading (file, then line, then item), so that a
/// writer can use it as a change's sequence and still name the line of a change it finds wanting later. 62 bits:
/// what a ledger's sequence holds.
public struct InputPlace: Sendable, Hashable {
    /// The file's index among the files read.
    public var file: Int
    /// The 1-based line in that file.
    public var line: Int
    /// The change's index among those of its text (an operation's in its request; 0 for a record of its own).
    public var item: Int

    private static let itemBits = 8
    private static let lineBits = 35
    private static let fileBits = 19
    /// The most files and lines a packed number holds.
    public static let maxFile = 1 << fileBits - 1
    public static let maxLine = 1 << lineBits - 1
    /// Items past this one share its number (more than CloudKit's 200 operations a request).
    public static let maxItem = 1 << itemBits - 1

    /// A change's place.
    public init(file: Int, line: Int, item: Int = 0) {
        self.file = file
        self.line = line
        self.item = item
    }

    /// The place a packed number stands for.
    public init(packed: Int64) {
        file = Int(packed >> Int64(Self.lineBits + Self.itemBits))
        line = Int(packed >> Int64(Self.itemBits)) & Self.maxLine
        item = Int(packed) & Self.maxItem
    }

    /// The place as one number; `nil` when the file's index or the line is too large to pack.
    public var packed: Int64? {
        guard (0...Self.maxFile).contains(file), (0...Self.maxLine).contains(line) else { return nil }
        return Int64(file) << Int64(Self.lineBits + Self.itemBits) | Int64(line) << Int64(Self.itemBits) | Int64(min(max(item, 0), Self.maxItem))
    }
}
