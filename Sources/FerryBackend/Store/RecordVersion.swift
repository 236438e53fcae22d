import FerryCore
import FerryJSON
import FerryRecords

/// What a backend holds under a record name: enough to skip an unchanged record or detect a conflict without
/// fetching the record.
public struct RecordVersion: Sendable, Hashable {
    /// The record type.
    public var recordType: String
    /// The current change tag.
    public var changeTag: String
    /// Whether this is a tombstone (the record was deleted); backends without tombstones never report one.
    public var isDeleted: Bool
    /// The SHA-256 of the record's content (``RecordContent``); `nil` for tombstones.
    public var contentDigest: SHA256Digest?

    /// Creates a version.
    public init(recordType: String, changeTag: String, isDeleted: Bool = false, contentDigest: SHA256Digest?) {
        self.recordType = recordType
        self.changeTag = changeTag
        self.isDeleted = isDeleted
        self.contentDigest = contentDigest
    }
}

/// A record's content as every backend compares it: its canonical CloudKit JSON without system fields, and that
/// text's SHA-256 (the content digest).
///
/// Two backends holding the same record give the same digest, so a copy skips records whose digest matches.
public struct RecordContent: Sendable {
    /// The canonical JSON without system fields.
    public var body: [UInt8]
    /// The SHA-256 of ``body``.
    public var digest: SHA256Digest
    /// Where the record's fields object (the value of `fields`) lies in ``body``.
    public var fieldsRange: Range<Int>

    /// The canonical JSON of the record's fields object, `{"name":{"type":…,"value":…},…}`: a part of ``body``.
    public var fieldsJSON: ArraySlice<UInt8> { body[fieldsRange] }

    /// The content of `record`.
    ///
    /// Borrowed: an initializer otherwise takes its arguments owned, and every caller copied its record to pass it.
    public init(_ record: borrowing Record) {
        // Room for most records at once (a few hundred bytes each): growing the buffer copies it.
        var writer = JSONWriter(capacity: 1024)
        fieldsRange = record.writeCloudKitJSON(to: &writer, includeSystemFields: false)
        body = writer.bytes
        digest = SHA256Hasher.digest(writer.bytes)
    }
}
