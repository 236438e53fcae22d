/// A reference to another record, with what happens when the target is deleted.
public struct Reference: Sendable, Hashable {
    /// What CloudKit does with the referencing record when the target changes.
    public enum Action: String, Sendable, Hashable, CaseIterable {
        /// Nothing happens.
        case none = "NONE"
        /// Deleting the target deletes the referencing record (a parent–child cascade).
        case deleteSelf = "DELETE_SELF"
        /// The target must exist when the referencing record is saved.
        case validate = "VALIDATE"
    }

    /// The target's record name.
    public var recordName: String
    /// The target's zone; a reference cannot cross zones.
    public var zoneID: ZoneID
    /// The delete action.
    public var action: Action

    /// Creates a reference.
    public init(recordName: String, zoneID: ZoneID = .default, action: Action = .none) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.action = action
    }

    /// The target's identity.
    public var target: RecordID { RecordID(recordName: recordName, zoneID: zoneID) }
}
