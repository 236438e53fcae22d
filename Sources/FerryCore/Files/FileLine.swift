/// A line of one of several files read in turn.
///
/// It packs into one number that orders like the reading (the file's index in the high bits, the line below), which
/// tables over millions of lines hold instead of a path and a line.
public struct FileLine: Sendable, Hashable {
    /// The file's index among the files read.
    public var file: Int
    /// The line in that file.
    public var line: Int

    /// The largest file index and line a packed number holds.
    public static let maxFile = 1 << 23 - 1
    public static let maxLine = 1 << 40 - 1

    /// A line of a file.
    public init(file: Int, line: Int) {
        self.file = file
        self.line = line
    }

    /// The line a packed number stands for.
    public init(packed: Int64) {
        file = Int(packed >> 40)
        line = Int(packed & Int64(Self.maxLine))
    }

    /// Whether the file index and line fit in a packed number.
    public var fits: Bool { (0...Self.maxFile).contains(file) && (0...Self.maxLine).contains(line) }

    /// The line as one number (meaningful only when it ``fits``).
    public var packed: Int64 { Int64(file) << 40 | Int64(line) }
}
