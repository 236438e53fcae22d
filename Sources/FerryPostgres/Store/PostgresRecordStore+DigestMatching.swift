import FerryBackend
import FerryCore
import FerryRecords
import NIOCore
import PostgresNIO

extension PostgresRecordStore: DigestMatching {
    /// Compares on the server: one primary-key probe per name, and only the positions that differ come back.
    ///
    /// A zone's names are compared in parts of 1 250 on up to four connections at once, so the server's cores share
    /// the probes of a large round.
    public func differing(_ ids: [RecordID], digests: [SHA256Digest]) async throws -> [Int] {
        guard ids.count == digests.count else { return Array(ids.indices) }
        var parts: [(zone: ZoneID, positions: ArraySlice<Int>)] = []
        for (zone, positions) in Dictionary(grouping: ids.indices, by: { ids[$0].zoneID }) {
            for start in stride(from: 0, to: positions.count, by: 1_250) {
                parts.append((zone, positions[start..<min(start + 1_250, positions.count)]))
            }
        }
        let names = ids.map(\.recordName)
        let allocator = ByteBufferAllocator()
        let keys = digests.map { digest in digest.withUnsafeBytes { allocator.buffer(bytes: $0) } }
        var found: [Int] = []
        try await withThrowingTaskGroup(of: [Int].self) { group in
            var next = 0
            func start() {
                let (zone, positions) = parts[next]
                next += 1
                group.addTask { [self] in
                    try await differing(in: zone, names: positions.map { names[$0] }, digests: positions.map { keys[$0] }).map {
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

    /// The offsets among `names` of the records of `zone` not held live with the digest at the same offset.
    private func differing(in zone: ZoneID, names: [String], digests: [ByteBuffer]) async throws -> [Int] {
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
