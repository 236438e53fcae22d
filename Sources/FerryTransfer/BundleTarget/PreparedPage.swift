import FerryBackend
import FerryBundle
import FerryRecords

/// A page of a source's lines prepared for a bundle writer on a worker thread: most lines through their shapes into
/// one ``PreparedLines``, the rest (a line of a new shape, a record with assets, a deletion, a record the bundle
/// refuses) each on its own.
struct PreparedPage: Sendable {
    /// One change of the page, in order.
    enum Item: Sendable {
        /// Line `index` of ``lines``.
        case batched(Int)
        /// A change prepared on its own.
        indirect case prepared(PreparedChange)
        /// A line that is not a record dictionary (a damaged backend), with why.
        case undecodable(RecordError, name: String?)
    }

    var lines: PreparedLines
    var items: [Item] = []
    /// Where the changes came from.
    let origin: String

    /// Prepares every change of `page`.
    init(_ page: ChangeLines, preparer: ChangePreparer, preparing: inout LinePreparer) {
        origin = page.origin
        // Canonical lines are about as long as the lines they were read from.
        var lines = PreparedLines(capacity: page.page.bytes.count + page.page.bytes.count / 8 + 1024)
        var items: [Item] = []
        items.reserveCapacity(page.page.entries.count)
        page.page.bytes.withUnsafeBytes { bytes in
            var start = 0
            for entry in page.page.entries {
                switch entry {
                case .deletion(let deletion):
                    items.append(.prepared(preparer.prepare(.deletion(deletion))))
                case .line(let end):
                    let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                    start = end
                    switch preparing.prepare(line, into: &lines) {
                    case .batched(let index): items.append(.batched(index))
                    case .prepared(let prepared): items.append(.prepared(prepared))
                    case .declined: items.append(Self.decoded(line, preparer: preparer))
                    }
                }
            }
        }
        (self.lines, self.items) = (lines, items)
    }

    /// A line the shapes and the transcoder declined, decoded and prepared the full way.
    private static func decoded(_ line: UnsafeRawBufferPointer, preparer: ChangePreparer) -> Item {
        do {
            return .prepared(preparer.prepare(try CloudKitJSONDecoder().decode(bytes: Array(line))))
        } catch {
            return .undecodable(error, name: LineNames(line).recordName)
        }
    }
}
