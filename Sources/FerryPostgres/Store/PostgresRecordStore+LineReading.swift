import FerryBackend
import FerryJSON
import FerryRecords

extension PostgresRecordStore: LineReading {
    /// A page of the change feed with each record written as a line around its `jsonb` fields' text.
    ///
    /// The fields are not decoded here: the system fields, name, type and zone are written in canonical order, the
    /// fields as the server wrote them, each row as it arrives.
    public func changeLines(in zone: ZoneID, since token: SyncToken?, limit: Int) async throws -> LinePage {
        let store = name
        let page = try await feedPage(in: zone, since: token, limit: limit, kind: "lines", into: FeedLines(zone: zone, rows: limit)) {
            lines, row in try lines.append(row, store: store)
        }
        return LinePage(bytes: page.content.json.bytes, entries: page.content.entries, syncToken: page.syncToken, moreComing: page.moreComing)
    }
}
