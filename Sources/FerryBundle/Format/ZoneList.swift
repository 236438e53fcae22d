import FerryCore
import FerryRecords
import FerrySorting

/// The zones of a bundle, sorted and each once, in bounded memory whatever their number (an app with a zone per user
/// or per share may have hundreds of thousands): those of its record files as the writer lists them in `schema.json`,
/// those `schema.json` lists as a reader reads them.
///
/// Zones are gathered in any order, with repeats, and sorted the first time they are asked for: by zone name, then
/// owner name, byte by byte.
public final class ZoneList {
    private let sorter: ExternalByteSorter
    private var table: SortedByteTable?
    private let temporaryDirectory: String?
    private let memoryLimit: Int
    private var record = ByteRecordWriter()

    /// An empty list keeping about `memoryLimit` bytes of zones in memory, the rest in scratch files under
    /// `temporaryDirectory` (default `$TMPDIR`).
    init(temporaryDirectory: String?, memoryLimit: Int = 2 << 20) {
        self.temporaryDirectory = temporaryDirectory
        self.memoryLimit = memoryLimit
        sorter = ExternalByteSorter(memoryLimit: memoryLimit, prefix: "ferry-schema-zones", temporaryDirectory: temporaryDirectory)
    }

    /// Adds a zone.
    /// - Throws: ``CoreError`` when a scratch file cannot be written.
    func append(_ zone: ZoneID) throws {
        record.removeAll()
        record.key(zone.zoneName)
        record.key(zone.ownerName)
        try sorter.append(record.bytes)
    }

    /// The number of distinct zones.
    /// - Throws: ``CoreError`` when a scratch file cannot be written or read.
    public func count() throws -> Int { try sorted().count }

    /// Calls `body` with each zone, in order, once.
    /// - Throws: ``CoreError`` when a scratch file cannot be written or read, or what `body` throws.
    public func forEach(_ body: (ZoneID) throws -> Void) throws {
        try sorted().forEach { _, key, _ in
            var reader = ByteRecordReader(key)
            try body(ZoneID(zoneName: try reader.key(), ownerName: try reader.key()))
        }
    }

    /// The zones, sorted and each once.
    private func sorted() throws -> SortedByteTable {
        if let table { return table }
        let sorted = try SortedByteTable(
            taking: sorter, prefix: "ferry-schema-zones", temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit,
            split: { (Array($0), UnsafeRawBufferPointer(start: nil, count: 0)) })
        table = sorted
        return sorted
    }
}
