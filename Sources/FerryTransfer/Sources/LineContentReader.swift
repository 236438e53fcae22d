import FerryBackend
import FerryJSON
import FerryRecords

/// What a line of CloudKit record JSON holds, as backends compare records: its content's canonical bytes (the record
/// without system fields, which ``FerryRecords/Record/contentDigest`` hashes), its identity and its assets.
struct LineContent {
    var recordType: String
    var recordName: String
    var zoneID: ZoneID
    /// The canonical JSON without system fields (``FerryBackend/RecordContent/body``).
    var body: ArraySlice<UInt8>
    /// The assets of its fields, with each field's name, in field order.
    var assets: [(field: String, asset: Asset)]
}

/// Reads lines' content without making records of them where it can (``CloudKitJSONTranscoder``), and the full way
/// (decoding) a line the transcoder declines: for the verbs that only compare or measure records (`diff`, `ls`).
struct LineContentReader {
    /// What a line turned out to be.
    enum Read {
        case content(LineContent)
        /// A line that does not decode, with what it gives of its names.
        case damaged(RecordFeed.UndecodableRecord)
    }

    private var transcoder = CloudKitJSONTranscoder(decoder: CloudKitJSONDecoder())
    private var json = JSONWriter(capacity: 4096)

    /// The content of `line`, `nil` for a line that is no record.
    ///
    /// The body is valid until the next call.
    mutating func read(_ line: ArraySlice<UInt8>) -> Read? {
        json.reset()
        if let transcoded = line.withUnsafeBytes({ transcoder.transcode($0, into: &json, includeSystemFields: false, naming: true) }),
            let name = transcoded.recordName
        {
            return .content(
                LineContent(
                    recordType: transcoded.recordType, recordName: name, zoneID: transcoded.zoneID, body: json.bytes[...],
                    assets: transcoded.assets))
        }
        switch RecordFeed.decodeLine(line) {
        case .success(let record)?:
            return .content(
                LineContent(
                    recordType: record.recordType, recordName: record.recordName, zoneID: record.zoneID, body: RecordContent(record).body[...],
                    assets: record.fields.assetsByField))
        case .failure(let damage)?: return .damaged(damage)
        case nil: return nil
        }
    }
}
