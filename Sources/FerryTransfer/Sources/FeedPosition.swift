import FerryBackend
import FerryRecords
import Foundation

/// Where a read of a backend's change feed ended, zone by zone: what `--since` takes to read only what changed after.
///
/// Its text is `ft1-` and the base64url of one line per zone (zone name, owner, sync token, separated by tabs), so a
/// shell passes it as it is and a time given to `--since` is never taken for one; a first line with no zone name,
/// `\tsource\t<identity>`, names the feed it was read from (``RecordStore/feedIdentity()``), where the backend has one.
public struct FeedPosition: Sendable, Hashable, CustomStringConvertible {
    /// Each zone's sync token.
    public var tokens: [ZoneID: SyncToken]
    /// The identity of the feed it was read from; `nil` for a backend without one, and in positions printed before
    /// Ferry kept it.
    public var source: String?

    /// A position from zones' tokens in the feed `source`.
    public init(tokens: [ZoneID: SyncToken], source: String? = nil) {
        self.tokens = tokens
        self.source = source
    }

    static let prefix = "ft1-"

    /// Reads a position's text; `nil` when `text` is not one (it may be a time).
    public init?(_ text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        var base64 = String(text.dropFirst(Self.prefix.count)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let lines = String(data: data, encoding: .utf8) else { return nil }
        var tokens: [ZoneID: SyncToken] = [:]
        var source: String?
        for line in lines.split(separator: "\n") {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[2].isEmpty else { return nil }
            if parts[0].isEmpty {
                guard parts[1] == "source", source == nil else { return nil }
                source = String(parts[2])
                continue
            }
            tokens[ZoneID(zoneName: String(parts[0]), ownerName: String(parts[1]))] = SyncToken(String(parts[2]))
        }
        self.tokens = tokens
        self.source = source
    }

    public var description: String {
        let zones = tokens.sorted { ($0.key.zoneName, $0.key.ownerName) < ($1.key.zoneName, $1.key.ownerName) }
            .map { "\($0.key.zoneName)\t\($0.key.ownerName)\t\($0.value.text)" }
        let lines = ((source.map { ["\tsource\t\($0)"] } ?? []) + zones).joined(separator: "\n")
        let base64 = Data(lines.utf8).base64EncodedString()
        return Self.prefix
            + base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
