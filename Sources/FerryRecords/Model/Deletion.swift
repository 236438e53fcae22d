/// A deleted record (a tombstone): only its type, name and zone remain.
public struct Deletion: Sendable, Hashable {
    /// The type of the deleted record.
    public var recordType: String
    /// The name of the deleted record.
    public var recordName: String
    /// The zone the record was deleted from.
    public var zoneID: ZoneID

    /// Creates a deletion.
    public init(recordType: String, recordName: String, zoneID: ZoneID = .default) {
        self.recordType = recordType
        self.recordName = recordName
        self.zoneID = zoneID
    }

    /// The deleted record's identity.
    public var id: RecordID { RecordID(recordName: recordName, zoneID: zoneID) }
}

/// One item of a record stream: a record to write or a record to delete.
public enum RecordChange: Sendable, Hashable {
    /// A record, created or updated.
    case record(Record)
    /// A deleted record.
    case deletion(Deletion)

    /// The record type of either kind.
    public var recordType: String {
        switch self {
        case .record(let record): record.recordType
        case .deletion(let deletion): deletion.recordType
        }
    }

    /// The zone of either kind.
    public var zoneID: ZoneID {
        switch self {
        case .record(let record): record.zoneID
        case .deletion(let deletion): deletion.zoneID
        }
    }

    /// The identity of either kind.
    public var id: RecordID { RecordID(recordName: recordName, zoneID: zoneID) }

    /// The record name of either kind.
    public var recordName: String {
        switch self {
        case .record(let record): record.recordName
        case .deletion(let deletion): deletion.recordName
        }
    }
}

extension RecordChange {
    /// Whether this is a deletion.
    public var isDeletion: Bool {
        if case .deletion = self { return true }
        return false
    }
}
