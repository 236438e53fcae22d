/// A record zone: its name and the user who owns it.
public struct ZoneID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// CloudKit's name for the current user as a zone owner.
    public static let defaultOwnerName = "__defaultOwner__"
    /// CloudKit's name for the default zone.
    public static let defaultZoneName = "_defaultZone"
    /// The default zone of the current user.
    public static let `default` = ZoneID(zoneName: defaultZoneName)

    /// The zone's name, such as `CarZone`.
    public var zoneName: String
    /// The owner's user record name; ``defaultOwnerName`` for the current user.
    public var ownerName: String

    /// Creates a zone ID.
    ///
    /// The default owner's name is always the one constant string, whatever string it was read from: a string read
    /// from a file is counted, and one shared by the millions of records and references of a copy made both of its
    /// threads update the same reference count (the constant is never counted).
    public init(zoneName: String, ownerName: String = ZoneID.defaultOwnerName) {
        self.zoneName = zoneName
        self.ownerName = ownerName == Self.defaultOwnerName ? Self.defaultOwnerName : ownerName
    }

    /// Whether the owner is the current user.
    public var hasDefaultOwner: Bool { ownerName == Self.defaultOwnerName }

    public var description: String { hasDefaultOwner ? zoneName : "\(zoneName)@\(ownerName)" }

    public static func < (lhs: ZoneID, rhs: ZoneID) -> Bool {
        if lhs.zoneName != rhs.zoneName { return lhs.zoneName.utf8.lexicographicallyPrecedes(rhs.zoneName.utf8) }
        return lhs.ownerName.utf8.lexicographicallyPrecedes(rhs.ownerName.utf8)
    }
}
