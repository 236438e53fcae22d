extension ObjectFields {
    /// CloudKit and CoreLocation classes; `nil` for any other class.
    func cloudKitContent(_ name: String, size: inout Int) throws(PlistError) -> ArchivedContent? {
        switch name {
        case "CKRecordID":
            return .recordID(try recordID())
        case "CKRecordZoneID":
            return .zoneID(try zoneID())
        case "CKReference":
            // The keys of an archived CKReference are not documented; take the record ID field and an action field.
            let fields = try allFields(size: &size)
            guard let id = fields.lazy.compactMap({ $0.value.recordID }).first else { return .fields(fields) }
            let action = fields.first { $0.name.lowercased().contains("action") }.flatMap { field -> Int64? in
                if case .integer(let number) = field.value { number } else { nil }
            }
            return .reference(ArchivedReference(recordID: id, action: action))
        case "CLLocation":
            guard let latitude = try real("kCLLocationCodingKeyCoordinateLatitude"),
                let longitude = try real("kCLLocationCodingKeyCoordinateLongitude")
            else { throw malformed("no coordinate") }
            return .location(
                ArchivedLocation(
                    latitude: latitude, longitude: longitude, altitude: try real("kCLLocationCodingKeyAltitude"),
                    horizontalAccuracy: try real("kCLLocationCodingKeyHorizontalAccuracy"),
                    verticalAccuracy: try real("kCLLocationCodingKeyVerticalAccuracy"), speed: try real("kCLLocationCodingKeySpeed"),
                    course: try real("kCLLocationCodingKeyCourse"), timestamp: try real("kCLLocationCodingKeyTimestamp")))
        default:
            return nil
        }
    }

    func recordID() throws(PlistError) -> ArchivedRecordID {
        guard let name = try string("RecordName") else { throw malformed("no RecordName") }
        var size = 0
        guard case .object(let zone)? = try value("ZoneID", size: &size), case .zoneID(let zoneID) = zone.content else {
            throw malformed("no ZoneID")
        }
        return ArchivedRecordID(recordName: name, zoneID: zoneID)
    }

    func zoneID() throws(PlistError) -> ArchivedZoneID {
        guard let name = try string("ZoneName") else { throw malformed("no ZoneName") }
        return ArchivedZoneID(zoneName: name, ownerName: try string("ownerName") ?? "__defaultOwner__")
    }
}

extension KeyedArchive {
    /// The CKRecordID under `$top.root`, read directly (no tree, nothing allocated but the names): the hot path for
    /// the archived `recordID` column of every row of a Core Data store.
    /// - Throws: ``PlistError`` when the root is not a CKRecordID.
    public func recordID() throws(PlistError) -> ArchivedRecordID {
        guard let root = try topUID("root") else { throw PlistError(.malformedArchive, "$top has no root") }
        return try recordID(uid: root)
    }

    /// The CKRecordID with a UID, read directly.
    public func recordID(uid: Int) throws(PlistError) -> ArchivedRecordID {
        try recordIDAndNameObject(uid: uid).recordID
    }

    /// The CKRecordID under `$top.root` and the string object its record name was read from.
    func recordIDAndNameObject() throws(PlistError) -> (recordID: ArchivedRecordID, nameObject: Int) {
        guard let root = try topUID("root") else { throw PlistError(.malformedArchive, "$top has no root") }
        return try recordIDAndNameObject(uid: root)
    }

    /// The CKRecordID with a UID and the string object its record name was read from.
    func recordIDAndNameObject(uid: Int) throws(PlistError) -> (recordID: ArchivedRecordID, nameObject: Int) {
        let record = try object(uid)
        guard try graph.kind(of: record) == .dictionary, try isClass(record, "CKRecordID") else {
            throw PlistError(.malformedArchive, "object \(uid) is not a CKRecordID")
        }
        guard let nameField = try graph.lookup(record, "RecordName"), let zoneField = try graph.lookup(record, "ZoneID") else {
            throw PlistError(.malformedArchive, "CKRecordID \(uid) lacks RecordName or ZoneID")
        }
        let zone = try object(try graph.uid(zoneField))
        guard try graph.kind(of: zone) == .dictionary, try isClass(zone, "CKRecordZoneID"),
            let zoneNameField = try graph.lookup(zone, "ZoneName")
        else {
            throw PlistError(.malformedArchive, "CKRecordID \(uid) has no CKRecordZoneID")
        }
        let owner = try graph.lookup(zone, "ownerName").map { field throws(PlistError) in try ownerName(field) } ?? "__defaultOwner__"
        let nameObject = try stringObject(nameField)
        let recordID = ArchivedRecordID(
            recordName: try graph.string(nameObject), zoneID: ArchivedZoneID(zoneName: try string(zoneNameField), ownerName: owner))
        return (recordID, nameObject)
    }

    /// The metadata of a CKRecord system-fields archive (`encodeSystemFields(with:)`), or `nil` when the archive is
    /// not one (its `$top` has no `RecordType` and `RecordID`).
    public func systemFields() throws(PlistError) -> ArchivedSystemFields? {
        guard let typeUID = try topUID("RecordType"), let idUID = try topUID("RecordID") else { return nil }
        let decoder = ArchiveDecoder(archive: self, limits: PlistLimits())
        func value(_ key: StaticString) throws(PlistError) -> ArchivedValue? {
            guard let uid = try topUID(key) else { return nil }
            return try decoder.decode(uid: uid, depth: 0).value
        }
        func date(_ key: StaticString) throws(PlistError) -> Double? {
            guard case .object(let object)? = try value(key), case .date(let seconds) = object.content else { return nil }
            return seconds
        }
        guard let recordType = try decoder.decode(uid: typeUID, depth: 0).value.stringValue else {
            throw PlistError(.malformedArchive, "RecordType is not a string")
        }
        return ArchivedSystemFields(
            recordType: recordType, recordID: try recordID(uid: idUID), changeTag: try value("ETag")?.stringValue,
            created: try date("RecordCtime"), modified: try date("RecordMtime"), creator: try value("CreatorUserRecordID")?.recordID,
            lastModifier: try value("LastModifiedUserRecordID")?.recordID, modifiedByDevice: try value("ModifiedByDevice")?.stringValue)
    }

    /// Whether an object dictionary's class (or a superclass) has a name.
    private func isClass(_ object: Int, _ name: StaticString) throws(PlistError) -> Bool {
        guard let reference = try graph.lookup(object, "$class") else { return false }
        let definition = try self.object(try graph.uid(reference))
        guard let nameObject = try graph.lookup(definition, "$classname") else { return false }
        return try graph.string(nameObject, equals: name)
    }

    /// An owner name field; the default owner's name comes back as the constant, not as a string made of the bytes
    /// (one fewer allocation per record ID, and nothing to count: see ``ZoneID/init(zoneName:ownerName:)``).
    private func ownerName(_ field: Int) throws(PlistError) -> String {
        let target = try stringObject(field)
        return try graph.string(target, equals: "__defaultOwner__") ? "__defaultOwner__" : try graph.string(target)
    }

    /// A string field: inline, or by UID to a string object.
    private func string(_ field: Int) throws(PlistError) -> String {
        try graph.string(try stringObject(field))
    }

    /// The string object a field holds: itself, or the object its UID names.
    private func stringObject(_ field: Int) throws(PlistError) -> Int {
        let target = try graph.kind(of: field) == .uid ? try object(try graph.uid(field)) : field
        guard try graph.kind(of: target) == .string else { throw PlistError(.malformedArchive, "expected a string") }
        return target
    }
}
