import FerryCore
import FerryJSON
import FerryRecords

/// A record or deletion with everything done that does not depend on other records: per-record validation, the
/// canonical JSON, its identity key, and the references and assets it holds.
///
/// Preparing is pure and thread-safe, so many changes can be prepared in parallel; ``BundleWriter/add(_:)-(PreparedChange)``
/// then applies the checks that need the records seen before (duplicates, field types, asset sizes) in order.
public struct PreparedChange: Sendable {
    /// The record type.
    public let recordType: String
    /// The zone.
    public let zoneID: ZoneID
    /// Whether it is a deletion.
    public let isDeletion: Bool
    /// Its canonical CloudKit JSON (what the bundle stores).
    public let canonicalJSON: [UInt8]
    /// What per-record validation found.
    public let problems: [RecordProblem]
    /// Its identity's key.
    public let key: RecordKey
    /// The references' targets in field order, each with whether it is a DELETE_SELF reference (counted against the
    /// per-target limit).
    public let references: [(target: RecordKey, deleteSelf: Bool)]
    /// The assets, with the field each is in.
    public let assets: [(field: String, asset: Asset)]
    /// A record's layout (`nil` for a deletion).
    public let layout: RecordSchema.Layout?
    /// The change, when it was prepared from one (not from a line).
    private let given: RecordChange?

    /// The change; decoded from ``canonicalJSON`` when it was prepared from a line, which only a rejected record or
    /// the first record of a layout needs.
    public var change: RecordChange {
        if let given { return given }
        do {
            return try CloudKitJSONDecoder().decode(bytes: canonicalJSON)
        } catch {
            // The bytes were accepted by CanonicalRecordScanner, which promises they decode (tests and fuzzing).
            preconditionFailure("canonical JSON of a prepared line does not decode: \(error)")
        }
    }

    init(
        change: RecordChange, canonicalJSON: [UInt8], problems: [RecordProblem], key: RecordKey,
        references: [(target: RecordKey, deleteSelf: Bool)], assets: [(field: String, asset: Asset)], layout: RecordSchema.Layout?
    ) {
        (recordType, zoneID, isDeletion) = (change.recordType, change.zoneID, change.isDeletion)
        given = change
        self.canonicalJSON = canonicalJSON
        self.problems = problems
        self.key = key
        self.references = references
        self.assets = assets
        self.layout = layout
    }

    /// A valid record prepared from a line (it has no problems).
    init(
        record recordType: String, zoneID: ZoneID, canonicalJSON: [UInt8], key: RecordKey, references: [(target: RecordKey, deleteSelf: Bool)],
        assets: [(field: String, asset: Asset)], layout: RecordSchema.Layout
    ) {
        (self.recordType, self.zoneID, isDeletion, given) = (recordType, zoneID, false, nil)
        self.canonicalJSON = canonicalJSON
        problems = []
        self.key = key
        self.references = references
        self.assets = assets
        self.layout = layout
    }
}

/// Prepares changes for a ``BundleWriter``; a value that can be shared between threads.
public struct ChangePreparer: Sendable {
    /// The record rules.
    public let validator: RecordValidator

    /// A preparer that checks records against `validator`.
    public init(validator: RecordValidator) { self.validator = validator }

    /// Validates and encodes one change.
    public func prepare(_ change: consuming RecordChange) -> PreparedChange {
        var json = JSONWriter(capacity: 1024)
        // The record is taken out of the change once and moved back at the end: each use of a payload bound from the
        // enum would otherwise copy it (a retain and release of every string in it).
        switch consume change {
        case .record(let record):
            record.writeCloudKitJSON(to: &json)
            var references: [(target: RecordKey, deleteSelf: Bool)] = []
            var assets: [(field: String, asset: Asset)] = []
            for field in record.fields {
                switch field.value {
                case .reference(let reference): references.append((RecordKey(reference.target), reference.action == .deleteSelf))
                case .asset(let asset): assets.append((field.name, asset))
                case .list(let list) where list.elementType == .reference:
                    references += field.value.references.map { (RecordKey($0.target), $0.action == .deleteSelf) }
                case .list(let list) where list.elementType == .asset:
                    assets += field.value.assets.map { (field.name, $0) }
                default: break
                }
            }
            let problems = validator.problems(in: record)
            let key = RecordKey(record.id)
            let layout = RecordSchema.Layout(of: record)
            return PreparedChange(
                change: .record(record), canonicalJSON: json.bytes, problems: problems, key: key, references: references,
                assets: assets, layout: layout)
        case .deletion(let deletion):
            deletion.writeCloudKitJSON(to: &json)
            let problems = validator.problems(in: deletion)
            let key = RecordKey(deletion.id)
            return PreparedChange(
                change: .deletion(deletion), canonicalJSON: json.bytes, problems: problems, key: key, references: [], assets: [],
                layout: nil)
        }
    }
}
