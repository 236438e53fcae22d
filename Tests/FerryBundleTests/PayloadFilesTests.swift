import FerryCore
import FerryRecords
import FerrySorting
import FerryTesting
import Testing

@testable import FerryBundle

/// The reader's tables of a bundle's files and zones, joined and checked in path order, in memory or on disk.
@Suite struct PayloadFilesTests {
    static let zones = (0..<300).map { ZoneID(zoneName: "Z\($0)", ownerName: $0 % 9 == 0 ? "_o\($0)" : ZoneID.defaultOwnerName) }

    static func recordFile(_ zone: ZoneID, type: String = "Car") -> BundleManifest.RecordFile {
        BundleManifest.RecordFile(
            path: BundleLayout.recordsPath(type: type, zone: zone), kind: .records, recordType: type, zoneID: zone, count: 2, bytes: 90)
    }

    static func digest(_ path: String) -> SHA256Digest { SHA256Hasher.digest(Array(path.utf8)) }

    /// A payload manifest's table of the files (but the assets) with these paths.
    private func listing(_ paths: [String], limit: Int, in scratch: Scratch) throws -> SortedByteTable {
        var builder = SortedByteTable.Builder(prefix: "test-listing", temporaryDirectory: scratch.path, memoryLimit: limit)
        for path in paths.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            try builder.append(key: Array(path.utf8), value: Self.digest(path).bytes)
        }
        return try builder.finish()
    }

    private func join(listed: [String], described: [BundleManifest.RecordFile], limit: Int, in scratch: Scratch) throws -> PayloadFiles {
        try PayloadFiles(
            listing: try listing(listed, limit: limit, in: scratch), described: RecordFileList(described), archive: "b.tar",
            temporaryDirectory: scratch.path, memoryLimit: limit)
    }

    @Test(arguments: [1 << 30, 0])
    func everyFileIsFoundWithItsDigestAndDescription(limit: Int) throws {
        let scratch = try Scratch()
        // Described in bundle order (by type, then zone), which is not path order.
        let files = ["Truck", "Car"].flatMap { type in Self.zones.map { Self.recordFile($0, type: type) } }
        let listed = files.map(\.path) + [BundleLayout.manifestFile, BundleLayout.schemaFile]
        let payload = try join(listed: listed, described: files, limit: limit, in: scratch)
        #expect(payload.count == listed.count && payload.undescribed == nil)
        var ranks = Set<Int>()
        for file in files {
            let entry = try #require(try payload.entry(at: file.path))
            #expect(entry.digest == Self.digest(file.path) && entry.file == file)
            ranks.insert(entry.rank)
        }
        let manifest = try #require(try payload.entry(at: BundleLayout.manifestFile))
        #expect(manifest.file == nil && manifest.digest == Self.digest(BundleLayout.manifestFile))
        #expect(try payload.entry(at: "data/records/Z1/Bus.ndjson") == nil)
        var paths: [String] = []
        try payload.forEach { path, entry in
            #expect(entry.rank == paths.count)
            paths.append(path)
        }
        #expect(paths == listed.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(ranks.count == files.count)
    }

    @Test(arguments: [1 << 30, 0])
    func disagreementsAreFoundWhateverTheOrder(limit: Int) throws {
        let scratch = try Scratch()
        let files = Self.zones.map { Self.recordFile($0) }
        func code(listed: [String], described: [BundleManifest.RecordFile]) -> (BundleError.Code, String)? {
            do {
                _ = try join(listed: listed, described: described, limit: limit, in: scratch)
                return nil
            } catch let error as BundleError {
                return (error.code, error.message)
            } catch {
                return nil
            }
        }
        let twice = code(listed: files.map(\.path), described: files + [files[150]])
        #expect(twice?.0 == .invalidMetadata && twice?.1.contains("lists \(files[150].path) twice") == true)
        let unlisted = code(listed: files.dropLast().map(\.path), described: files)
        #expect(unlisted?.0 == .missingEntry && unlisted?.1.contains("\(files[299].path) is in data/manifest.json but not") == true)
        // Listed but not described: the first in path order is kept for the caller to report.
        let payload = try join(listed: files.map(\.path), described: Array(files.dropFirst(3)), limit: limit, in: scratch)
        let first = files.prefix(3).map(\.path).min { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(payload.undescribed == first)
    }

    @Test(arguments: [1 << 30, 0])
    func zonesAreSortedOnceEach(limit: Int) throws {
        let scratch = try Scratch()
        let zones = ZoneList(temporaryDirectory: scratch.path, memoryLimit: limit)
        var generator = SeededGenerator(seed: 5)
        for zone in (Self.zones + Self.zones.prefix(40)).shuffled(using: &generator) { try zones.append(zone) }
        #expect(try zones.count() == Self.zones.count)
        var listed: [ZoneID] = []
        try zones.forEach { listed.append($0) }
        let expected = Self.zones.sorted { a, b in
            a.zoneName != b.zoneName
                ? a.zoneName.utf8.lexicographicallyPrecedes(b.zoneName.utf8) : a.ownerName.utf8.lexicographicallyPrecedes(b.ownerName.utf8)
        }
        #expect(listed == expected)
    }
}
