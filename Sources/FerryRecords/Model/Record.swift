/// A record in Ferry's neutral model: what every importer produces and every exporter consumes.
///
/// It follows CloudKit's `CKRecord`: a record type, a record name unique within its zone, typed fields and optional
/// server metadata. Records are plain values; compare them with ``digest`` or ``contentDigest``.
///
/// ```swift
/// var car = Record(recordType: "Car", recordName: "Car.0E6F…", zoneID: ZoneID(zoneName: "CarZone"))
/// car.fields["name"] = .string("Beetle")
/// ```
public struct Record: Sendable, Hashable {
    /// The record type, such as `Car`.
    public var recordType: String
    /// The record's name, unique within its zone.
    public var recordName: String
    /// The zone the record lives in.
    public var zoneID: ZoneID
    /// The record's fields by name.
    public var fields: RecordFields
    /// Server metadata, when the record came from a sync backend.
    public var system: SystemFields?

    /// Creates a record.
    public init(
        recordType: String, recordName: String, zoneID: ZoneID = .default, fields: RecordFields = [:],
        system: SystemFields? = nil
    ) {
        self.recordType = recordType
        self.recordName = recordName
        self.zoneID = zoneID
        self.fields = fields
        self.system = system
    }

    /// The record's identity: zone and name.
    public var id: RecordID { RecordID(recordName: recordName, zoneID: zoneID) }
}

/// A record's identity: its name within a zone.
public struct RecordID: Sendable, Hashable, CustomStringConvertible {
    /// The record name.
    public var recordName: String
    /// The zone.
    public var zoneID: ZoneID

    /// Creates a record ID.
    public init(recordName: String, zoneID: ZoneID = .default) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    public var description: String { "\(zoneID)/\(recordName)" }
}
