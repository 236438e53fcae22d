import FerryCore
import FerryJSON
import FerryRecords

/// Valid record lines of one batch, prepared through their shapes and held together: one buffer of canonical JSON,
/// one list of references, and a fixed-size entry per line.
///
/// A worker fills it (``LinePreparer/prepare(_:into:)``) and the admitting thread takes the lines in order
/// (``BundleWriter/add(_:at:origin:)``). Held as a ``PreparedChange`` each, a line cost its own arrays and strings:
/// made on the worker, retained and released where they were admitted, freed on a third thread; that was about a
/// tenth of `ferry pack`'s CPU time.
package struct PreparedLines: Sendable {
    /// Where one line's parts are.
    struct Entry {
        /// Its canonical JSON: `json[start..<end]`.
        var start: Int
        var end: Int
        /// Its references: `references[referencesStart..<referencesEnd]`.
        var referencesStart: Int32
        var referencesEnd: Int32
        /// Its record type and zone: `files[file]`.
        var file: Int32
        var layout: RecordSchema.Layout
        var key: RecordKey
    }

    /// The lines' canonical JSON, one after another.
    var json: JSONWriter
    /// Every line's references' targets, in canonical field order, with whether each is DELETE_SELF.
    var references: [(target: RecordKey, deleteSelf: Bool)] = []
    /// The record types and zones of the lines (a few per batch).
    var files: [(recordType: String, zoneID: ZoneID)] = []
    var entries: [Entry] = []

    /// An empty batch with room for about `bytes` of canonical JSON.
    package init(capacity bytes: Int = 0) {
        json = JSONWriter(capacity: bytes)
    }

    /// How many lines it holds.
    package var count: Int { entries.count }

    /// The number of a record type and zone in ``files``, added if new.
    mutating func file(recordType: String, zoneID: ZoneID) -> Int32 {
        // The last one first: lines of one type mostly come together, or a few alternate.
        let index = files.withUnsafeBufferPointer { files in
            files.indices.last { files[$0].recordType == recordType && files[$0].zoneID == zoneID }
        }
        if let index { return Int32(index) }
        files.append((recordType, zoneID))
        return Int32(files.count - 1)
    }

    /// Calls `body` with a line's canonical JSON, record type, zone and references, lent in place.
    func withLine<Result>(
        _ entry: Entry, _ body: (UnsafeRawBufferPointer, String, ZoneID, UnsafeBufferPointer<(target: RecordKey, deleteSelf: Bool)>) throws -> Result
    ) rethrows -> Result {
        try json.bytes.withUnsafeBytes { bytes in
            try files.withUnsafeBufferPointer { files in
                try references.withUnsafeBufferPointer { references in
                    let file = files[Int(entry.file)]
                    return try body(
                        UnsafeRawBufferPointer(rebasing: bytes[entry.start..<entry.end]), file.recordType, file.zoneID,
                        UnsafeBufferPointer(rebasing: references[Int(entry.referencesStart)..<Int(entry.referencesEnd)]))
                }
            }
        }
    }

    /// Line `index` as a prepared change of its own (for the few lines that need one: the first of a layout, say).
    package func change(at index: Int) -> PreparedChange {
        let entry = entries[index]
        let file = files[Int(entry.file)]
        return PreparedChange(
            record: file.recordType, zoneID: file.zoneID, canonicalJSON: Array(json.bytes[entry.start..<entry.end]), key: entry.key,
            references: Array(references[Int(entry.referencesStart)..<Int(entry.referencesEnd)]), assets: [], layout: entry.layout)
    }
}
