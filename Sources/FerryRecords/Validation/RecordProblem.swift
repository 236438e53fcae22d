/// Something wrong with a record, found before anything is written.
///
/// Validation never throws: it returns problems as data, so one bad record goes to the reject file and the rest of
/// the run continues.
public struct RecordProblem: Sendable, Hashable, CustomStringConvertible {
    /// Whether the record can still be written.
    public enum Severity: String, Sendable, Hashable {
        /// The record cannot be written; it is rejected.
        case error
        /// The record is written, but something deserves attention.
        case warning
    }

    /// How serious the problem is.
    public var severity: Severity
    /// Which rule was broken.
    public var rule: RecordRule
    /// Where in the record, such as `recordName` or `fields.title`.
    public var path: String
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates a problem.
    public init(_ severity: Severity, _ rule: RecordRule, at path: String, _ message: String) {
        self.severity = severity
        self.rule = rule
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// The rules records are checked against: CloudKit's, so a record that passes can be written to CloudKit.
public enum RecordRule: String, Sendable, Hashable, CaseIterable {
    /// The JSON is not a record Ferry can read.
    case malformed = "malformed"
    /// Record names are ASCII, 1–255 characters, and do not start with `_`.
    case recordName = "record-name"
    /// Record types start with a letter and contain letters, digits and `_`, up to 255 characters.
    case recordType = "record-type"
    /// Zone names are 1–255 characters of letters, digits, `_`, `-` and `.`.
    case zoneName = "zone-name"
    /// Owner names are 1–255 printable ASCII characters.
    case ownerName = "owner-name"
    /// Field names start with a letter and contain letters, digits and `_`, up to 255 characters.
    case fieldName = "field-name"
    /// Field names CloudKit reserves for system fields.
    case reservedFieldName = "reserved-field-name"
    /// A record may hold at most 1 MB of field data, assets excluded.
    case recordSize = "record-size"
    /// Numbers must be finite; locations must be on Earth.
    case fieldValue = "field-value"
    /// A reference must point into the record's own zone, at a valid record name.
    case reference = "reference"
    /// CloudKit allows at most 750 DELETE_SELF references to one record (a warning).
    case deleteSelfLimit = "delete-self-limit"
    /// A field must keep one type across all records of a type.
    case fieldType = "field-type"
    /// A record name appears twice in one zone.
    case duplicate = "duplicate"
    /// An asset named by the record could not be read.
    case asset = "asset"
    /// The record uses a CloudKit feature Ferry does not carry.
    case unsupported = "unsupported"
}
