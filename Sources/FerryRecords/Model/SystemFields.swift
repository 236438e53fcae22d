/// The metadata a sync server keeps for a record: its change tag and who created and last modified it, when.
public struct SystemFields: Sendable, Hashable {
    /// The server's version tag of the record (`recordChangeTag`).
    public var changeTag: String?
    /// When and by whom the record was created.
    public var created: RecordStamp?
    /// When and by whom the record was last modified.
    public var modified: RecordStamp?

    /// Creates system fields.
    public init(changeTag: String? = nil, created: RecordStamp? = nil, modified: RecordStamp? = nil) {
        self.changeTag = changeTag
        self.created = created
        self.modified = modified
    }

    /// Whether nothing is set.
    public var isEmpty: Bool { changeTag == nil && created == nil && modified == nil }
}

/// A point in a record's history: a time, the user and the device.
public struct RecordStamp: Sendable, Hashable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var timestamp: Int64
    /// The user record name of the user who made the change.
    public var userRecordName: String?
    /// The device that made the change.
    public var deviceID: String?

    /// Creates a stamp.
    public init(timestamp: Int64, userRecordName: String? = nil, deviceID: String? = nil) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
        self.deviceID = deviceID
    }
}
