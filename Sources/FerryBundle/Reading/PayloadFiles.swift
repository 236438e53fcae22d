import FerryCore
import FerryRecords
import FerrySorting

/// A bundle's payload files but its assets, by path: each one's SHA-256 from the payload manifest, joined with what
/// `manifest.json` says of the record and deletion files.
///
/// A bundle has one record file per record type and zone, and may have hundreds of thousands; the table is sorted
/// by path and leaves memory when large, so reading a bundle costs the same whatever its number of files. Each file
/// has a rank, its position in path order, which a scan marks in a bit set to find the files it did not see.
struct PayloadFiles {
    /// A payload file as listed.
    struct Entry {
        /// Its position in path order.
        var rank: Int
        /// The SHA-256 the payload manifest lists for it.
        var digest: SHA256Digest
        /// What `manifest.json` says of it, for a record or deletion file.
        var file: BundleManifest.RecordFile?
    }

    private let table: SortedByteTable
    /// The first file the payload manifest lists that `manifest.json` does not describe (other than `manifest.json`
    /// and `schema.json` themselves), if any.
    let undescribed: String?

    /// The number of files.
    var count: Int { table.count }

    /// Joins the payload manifest's files with `manifest.json`'s, in path order, keeping about `memoryLimit` bytes of
    /// them in memory and the rest in scratch files under `temporaryDirectory` (default `$TMPDIR`).
    /// - Throws: ``BundleError`` (`invalidMetadata`) for a file `manifest.json` lists twice, (`missingEntry`) for one
    ///   the payload manifest does not list; ``CoreError`` when a scratch file cannot be written or read.
    init(listing: SortedByteTable, described: RecordFileList, archive: String, temporaryDirectory: String?, memoryLimit: Int) throws {
        let sorter = ExternalByteSorter(memoryLimit: memoryLimit, prefix: "ferry-described-files", temporaryDirectory: temporaryDirectory)
        var record = ByteRecordWriter()
        try described.forEach { file in
            record.removeAll()
            record.key(file.path)
            file.encode(into: &record)
            try sorter.append(record.bytes)
        }
        var builder = SortedByteTable.Builder(prefix: "ferry-payload-files", temporaryDirectory: temporaryDirectory, memoryLimit: memoryLimit)
        let listed = listing.makeCursor()
        var hasListed = try listed.next()
        var undescribed: String?
        /// Adds the current listed file, which `manifest.json` does not describe.
        func addListedOnly() throws {
            let path = String(decoding: listed.currentKey, as: UTF8.self)
            if undescribed == nil, path != BundleLayout.manifestFile, path != BundleLayout.schemaFile { undescribed = path }
            try builder.append(key: listed.currentKey, value: listed.currentValue)
            hasListed = try listed.next()
        }
        var last: [UInt8]?
        try sorter.forEachSorted { bytes in
            var reader = ByteRecordReader(bytes)
            let path = try reader.key()
            let key = Array(path.utf8)
            guard key != last else { throw BundleError(.invalidMetadata, "\(archive): data/manifest.json lists \(path) twice") }
            last = key
            while hasListed, listed.currentKey.withUnsafeBytes({ listedKey in key.withUnsafeBytes { ExternalByteSorter.precedes(listedKey, $0) } }) {
                try addListedOnly()
            }
            guard hasListed, listed.currentKey == key else {
                throw BundleError(.missingEntry, "\(archive): \(path) is in data/manifest.json but not in manifest-sha256.txt")
            }
            try builder.append(key: key, value: listed.currentValue + Array(reader.rest()))
            hasListed = try listed.next()
        }
        sorter.reset()
        while hasListed { try addListedOnly() }
        table = try builder.finish()
        self.undescribed = undescribed
    }

    /// The file at a path, if the payload manifest lists it.
    /// - Throws: ``CoreError`` when the scratch table cannot be read.
    func entry(at path: String) throws -> Entry? {
        try table.find(path.utf8) { rank, value in try Self.entry(rank: rank, value: value) }
    }

    /// Calls `body` with every file's path and entry, in path order.
    /// - Throws: ``CoreError`` when the scratch table cannot be read, or what `body` throws.
    func forEach(_ body: (String, Entry) throws -> Void) throws {
        try table.forEach { rank, key, value in try body(String(decoding: key, as: UTF8.self), try Self.entry(rank: rank, value: value)) }
    }

    /// An entry from its value in the table: the digest, then the record file if there is one.
    private static func entry(rank: Int, value: UnsafeRawBufferPointer) throws -> Entry {
        var reader = ByteRecordReader(value)
        guard let digest = SHA256Digest(bytes: try reader.raw(32)) else {
            throw CoreError(.readFailed, "a scratch table of a bundle's files holds a damaged digest")
        }
        let rest = reader.rest()
        return Entry(rank: rank, digest: digest, file: rest.isEmpty ? nil : try BundleManifest.RecordFile(scratch: rest))
    }
}
