import FerryCore
import FerryJSON
import FerryRecords

/// One page of a zone's change feed with each record as a line of CloudKit record JSON, as a backend that keeps JSON
/// can give it without making records (``LineReading``).
public struct LinePage: Sendable {
    /// One change of the page.
    public enum Entry: Sendable {
        /// A record: its line is `bytes[start..<end]`, where `start` is the end of the line before it (or 0).
        case line(end: Int)
        /// A tombstone.
        case deletion(Deletion)
    }

    /// The records' lines, one after another, without separators.
    public var bytes: [UInt8]
    /// The changes in change order, as ``ChangePage/changes`` has them.
    public var entries: [Entry]
    /// The token to ask from next time.
    public var syncToken: SyncToken
    /// Whether more changes follow this page.
    public var moreComing: Bool

    /// Creates a page.
    public init(bytes: [UInt8], entries: [Entry], syncToken: SyncToken, moreComing: Bool) {
        self.bytes = bytes
        self.entries = entries
        self.syncToken = syncToken
        self.moreComing = moreComing
    }

    /// The page of `page`'s changes, each record written in canonical form.
    public init(_ page: ChangePage) {
        var bytes: [UInt8] = []
        var entries: [Entry] = []
        entries.reserveCapacity(page.changes.count)
        for change in page.changes {
            switch change {
            case .record(let record):
                bytes += record.canonicalJSON
                entries.append(.line(end: bytes.count))
            case .deletion(let deletion):
                entries.append(.deletion(deletion))
            }
        }
        self.init(bytes: bytes, entries: entries, syncToken: page.syncToken, moreComing: page.moreComing)
    }
}

extension LinePage {
    /// Where each record's line lies in ``bytes``, in change order (a tombstone has none).
    public var lineRanges: [Range<Int>] {
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(entries.count)
        var start = 0
        for case .line(let end) in entries {
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }

    /// Writes a record's system fields as members of its line, `"created":{…},"modified":{…},"recordChangeTag":…`
    /// (no comma before or after): what a backend adds to the JSON it keeps of a record to make its line.
    public static func writeSystemFields(tag: String, created: Int64, modified: Int64, into json: inout JSONWriter) {
        tag.withUTF8Bytes { writeSystemFields(tag: UnsafeRawBufferPointer($0), created: created, modified: modified, into: &json) }
    }

    /// Writes a record's system fields as the overload taking a `String` does, the change tag given as its UTF-8 bytes
    /// (as a database row holds it).
    package static func writeSystemFields(tag: UnsafeRawBufferPointer, created: Int64, modified: Int64, into json: inout JSONWriter) {
        json.raw("\"created\":{\"timestamp\":")
        json.integer(created)
        json.raw("},\"modified\":{\"timestamp\":")
        json.integer(modified)
        json.raw("},\"recordChangeTag\":")
        json.string(utf8: tag)
    }
}
