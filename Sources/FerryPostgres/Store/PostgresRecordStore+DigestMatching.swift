import FerryBackend
import FerryCore
import FerryRecords
import NIOCore
import PostgresNIO
import Synchronization

/// Where a zone's comparison of digests has got to in the zone's change feed.
enum DigestCursor: Sendable {
    /// Digests are looked for among the feed's rows after this change sequence first.
    case following(after: Int64)
    /// The feed stopped holding the records asked about: primary-key probes only.
    case probing
}

extension PostgresRecordStore: DigestMatching {
    /// Compares on the server, and only the positions that differ come back.
    ///
    /// A copy from the source that filled a zone asks about its records in the order of the zone's feed, so each
    /// zone's digests are first looked for among as many of the feed's next rows (one pass over the feed in all,
    /// instead of a primary-key probe per name). The names whose digest is not there (changed, deleted, new, or out
    /// of order) are probed, in parts of 1 250 on up to four connections at once. A zone whose feed stops holding the
    /// records asked about (a zone written from elsewhere) is only probed from then on.
    public func differing(_ ids: [RecordID], digests: [SHA256Digest]) async throws -> [Int] {
        guard ids.count == digests.count else { return Array(ids.indices) }
        let names = ids.map(\.recordName)
        var found: [Int] = []
        var parts: [(zone: ZoneID, positions: ArraySlice<Int>)] = []
        for (zone, positions) in ids.indices.groupedInRuns(by: { ids[$0].zoneID }) {
            let probed = try await unmetInFeed(of: zone, digests: DigestArray(positions.map { digests[$0] })).map { positions[$0] }
            for start in stride(from: 0, to: probed.count, by: 1_250) {
                parts.append((zone, probed[start..<min(start + 1_250, probed.count)]))
            }
        }
        try await withThrowingTaskGroup(of: [Int].self) { group in
            var next = 0
            func start() {
                let (zone, positions) = parts[next]
                next += 1
                group.addTask { [self] in
                    try await probing(in: zone, names: positions.map { names[$0] }, digests: DigestArray(positions.map { digests[$0] })).map {
                        positions[positions.startIndex + $0]
                    }
                }
            }
            while next < min(4, parts.count) { start() }
            for try await part in group {
                found += part
                if next < parts.count { start() }
            }
        }
        return found.sorted()
    }

    /// Looks for `digests` among as many of the rows next in `zone`'s feed: the offsets of those not held live there.
    ///
    /// A content digest covers the record's name, type and zone, so a row with the same digest is the same record,
    /// unchanged; the names need not be sent.
    private func unmetInFeed(of zone: ZoneID, digests: DigestArray) async throws -> [Int] {
        guard case .following(let after) = digestCursors.withLock({ $0[zone] ?? .following(after: 0) }) else {
            return Array(0..<digests.count)
        }
        var unmet: [Int] = []
        var last = after
        for row in try await read(
            PostgresQuery(
                unsafeSQL: """
                    WITH f AS MATERIALIZED (
                        SELECT digest, deleted, seq FROM \(schema).records
                        WHERE zone = (SELECT id FROM \(schema).zones WHERE zone_name = $1 AND owner_name = $2) AND seq > $3
                        ORDER BY seq LIMIT $4)
                    SELECT 0::bigint, coalesce((SELECT max(seq) FROM f), $3)
                    UNION ALL
                    SELECT w.i::bigint, 0::bigint FROM unnest($5::bytea[]) WITH ORDINALITY AS w(digest, i)
                    WHERE NOT EXISTS (SELECT 1 FROM f WHERE f.digest = w.digest AND NOT f.deleted)
                    """,
                binds: try Self.binds(zone.zoneName, zone.ownerName, after, Int64(digests.count), digests)))
        {
            let (position, sequence) = try row.decode((Int64, Int64).self)
            if position == 0 { last = sequence } else { unmet.append(Int(position) - 1) }
        }
        // Fewer than one in eight met: the feed is not in the order of the records asked about.
        let following = unmet.count <= digests.count - digests.count / 8 || digests.count < 64
        digestCursors.withLock { $0[zone] = following ? .following(after: last) : .probing }
        return unmet
    }

    /// The offsets among `names` of the records of `zone` not held live with the digest at the same offset, one
    /// primary-key probe each.
    private func probing(in zone: ZoneID, names: [String], digests: DigestArray) async throws -> [Int] {
        var found: [Int] = []
        for row in try await read(
            PostgresQuery(
                unsafeSQL: """
                    SELECT w.i::bigint FROM unnest($3::text[], $4::bytea[]) WITH ORDINALITY AS w(name, digest, i)
                    LEFT JOIN LATERAL (
                        SELECT digest, deleted FROM \(schema).records
                        WHERE zone = (SELECT id FROM \(schema).zones WHERE zone_name = $1 AND owner_name = $2) AND name = w.name LIMIT 1) r ON true
                    WHERE r.deleted IS NOT false OR r.digest IS DISTINCT FROM w.digest
                    """,
                binds: try Self.binds(zone.zoneName, zone.ownerName, names, digests)))
        {
            found.append(Int(try row.decode(Int64.self)) - 1)
        }
        return found
    }
}
