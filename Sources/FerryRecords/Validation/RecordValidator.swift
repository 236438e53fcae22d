import FerryCore

/// Checks records against CloudKit's rules before anything is written.
///
/// ```swift
/// let problems = RecordValidator().problems(in: record)
/// if problems.contains(where: { $0.severity == .error }) { /* reject */ }
/// ```
public struct RecordValidator: Sendable {
    /// The limits records are checked against; CloudKit's by default.
    public struct Limits: Sendable, Hashable {
        /// The largest record, in bytes of field data, assets excluded (CloudKit: 1 MB).
        public var maxRecordBytes = 1_000_000
        /// The longest record name, record type, zone name, owner name or field name.
        public var maxNameLength = 255
        /// The most DELETE_SELF references CloudKit allows to one target record.
        public var maxDeleteSelfReferencesPerTarget = 750
        /// Whether what only CloudKit refuses from a client (a record name starting with `_`, which CloudKit itself
        /// gives user records; more than ``maxRecordBytes``) is an error, as for a CloudKit target, or a warning, as
        /// for bundles and local stores, which hold such records as they are.
        public var enforcesCloudKitClientRules = false

        /// CloudKit's limits.
        public init() {}
    }

    /// Field names CloudKit reserves for its own metadata.
    public static let reservedFieldNames: Set<String> = [
        "creationDate", "creatorUserRecordID", "etag", "lastModifiedUserRecordID", "modificationDate",
        "modifiedByDevice", "recordChangeTag", "recordID", "recordType",
    ]

    /// Whether CloudKit reserves a field name (a switch: no hashing on this per-field path).
    static func isReserved(_ name: String) -> Bool {
        // Every reserved name starts with c, e, l, m or r and has 4, 8, 10, 12, 15, 16, 19 or 24 bytes: most field
        // names are told apart by their first byte and length, without nine string comparisons.
        switch name.utf8.first {
        case UInt8(ascii: "c"), UInt8(ascii: "e"), UInt8(ascii: "l"), UInt8(ascii: "m"), UInt8(ascii: "r"): break
        default: return false
        }
        switch name.utf8.count {
        case 4, 8, 10, 12, 15, 16, 19, 24: break
        default: return false
        }
        return switch name {
        case "creationDate", "creatorUserRecordID", "etag", "lastModifiedUserRecordID", "modificationDate",
            "modifiedByDevice", "recordChangeTag", "recordID", "recordType":
            true
        default: false
        }
    }

    /// The limits in force.
    public var limits: Limits

    /// Creates a validator.
    public init(limits: Limits = Limits()) { self.limits = limits }

    /// The problems of a record; empty when it can be written as it is.
    public func problems(in record: Record) -> [RecordProblem] {
        var problems: [RecordProblem] = []
        checkIdentity(type: record.recordType, name: record.recordName, zone: record.zoneID, into: &problems)
        for field in record.fields {
            let name = field.name
            if let reason = identifierProblem(name, what: "field name") {
                problems.append(RecordProblem(.error, .fieldName, at: "fields.\(name)", reason))
            } else if Self.isReserved(name) {
                problems.append(
                    RecordProblem(
                        .error, .reservedFieldName, at: "fields.\(name)",
                        "\"\(name)\" is reserved by CloudKit; rename the field (for example to \"\(name)Value\")"))
            }
            check(field.value, in: record.zoneID, name: name, index: nil, into: &problems)
        }
        let size = record.estimatedSize
        if size > limits.maxRecordBytes {
            problems.append(
                RecordProblem(
                    clientRuleSeverity, .recordSize, at: "",
                    "the record holds \(size) bytes of field data, more than CloudKit's \(limits.maxRecordBytes); move large BYTES values to "
                        + "ASSET fields" + (limits.enforcesCloudKitClientRules ? "" : " before it goes to CloudKit")))
        }
        return problems
    }

    /// The problems of a deletion: only its identity is checked.
    public func problems(in deletion: Deletion) -> [RecordProblem] {
        var problems: [RecordProblem] = []
        checkIdentity(type: deletion.recordType, name: deletion.recordName, zone: deletion.zoneID, into: &problems)
        return problems
    }

    /// The problems of either kind of change.
    public func problems(in change: RecordChange) -> [RecordProblem] {
        switch change {
        case .record(let record): problems(in: record)
        case .deletion(let deletion): problems(in: deletion)
        }
    }

    // MARK: - Names

    /// How a rule only CloudKit enforces on clients counts here.
    private var clientRuleSeverity: RecordProblem.Severity { limits.enforcesCloudKitClientRules ? .error : .warning }

    /// The problem of a record name, if any: one Ferry's formats cannot hold is an error, a leading `_` (which only
    /// CloudKit refuses, from clients) is at ``clientRuleSeverity``.
    private func recordNameIssue(_ name: String, rule: RecordRule, at path: String, prefix: String = "") -> RecordProblem? {
        name.withUTF8Bytes { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            if let reason = recordNameFormatProblem(utf8: bytes) { return RecordProblem(.error, rule, at: path, prefix + reason) }
            guard let reason = leadingUnderscoreProblem(utf8: bytes) else { return nil }
            let kept = limits.enforcesCloudKitClientRules ? "" : "; kept here, but CloudKit refuses it from a client"
            return RecordProblem(clientRuleSeverity, rule, at: path, prefix + reason + kept)
        }
    }

    private func checkIdentity(type: String, name: String, zone: ZoneID, into problems: inout [RecordProblem]) {
        if let problem = recordNameIssue(name, rule: .recordName, at: "recordName") { problems.append(problem) }
        if let reason = identifierProblem(type, what: "record type") {
            problems.append(RecordProblem(.error, .recordType, at: "recordType", reason))
        }
        if let reason = zoneNameProblem(zone.zoneName) {
            problems.append(RecordProblem(.error, .zoneName, at: "zoneID.zoneName", reason))
        }
        if let reason = ownerNameProblem(zone.ownerName) {
            problems.append(RecordProblem(.error, .ownerName, at: "zoneID.ownerRecordName", reason))
        }
    }

    /// Why a record name is invalid, or `nil` if it is valid.
    public func recordNameProblem(_ name: String) -> String? {
        name.withUTF8Bytes { recordNameProblem(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Why a record name, given as UTF-8 bytes (such as a JSON string in place), is invalid, or `nil` if it is valid;
    /// a valid name costs no allocation.
    package func recordNameProblem(utf8 name: UnsafeRawBufferPointer) -> String? {
        recordNameFormatProblem(utf8: name) ?? leadingUnderscoreProblem(utf8: name)
    }

    /// Why Ferry's formats cannot hold a record name (empty, too long, not printable ASCII), or `nil`.
    private func recordNameFormatProblem(utf8 name: UnsafeRawBufferPointer) -> String? {
        if name.isEmpty { return "record names cannot be empty" }
        if name.count > limits.maxNameLength {
            return "record names have at most \(limits.maxNameLength) characters, this one has \(name.count)"
        }
        if !name.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) {
            return "record names must be printable ASCII; \(Self.quoted(String(decoding: name, as: UTF8.self))) is not"
        }
        return nil
    }

    /// The rule only CloudKit enforces on record names, from clients: no leading `_` (it names user records so).
    private func leadingUnderscoreProblem(utf8 name: UnsafeRawBufferPointer) -> String? {
        name.first == UInt8(ascii: "_") ? "record names cannot start with \"_\" (reserved by CloudKit)" : nil
    }

    /// Why a record type or field name is invalid, or `nil` if it is valid.
    public func identifierProblem(_ name: String, what: String) -> String? {
        if name.isEmpty { return "\(what)s cannot be empty" }
        if name.utf8.count > limits.maxNameLength { return "\(what)s have at most \(limits.maxNameLength) characters" }
        guard let first = name.utf8.first, Self.isLetter(first),
            Self.allBytes(of: name, satisfy: { Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "_") })
        else {
            return "\(what)s start with a letter and contain only ASCII letters, digits and \"_\"; \(Self.quoted(name)) does not"
        }
        return nil
    }

    /// Why a zone name is invalid, or `nil` if it is valid.
    public func zoneNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "zone names cannot be empty" }
        if name.utf8.count > limits.maxNameLength { return "zone names have at most \(limits.maxNameLength) characters" }
        let allowed = Self.allBytes(of: name) {
            Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
        guard allowed else {
            return "zone names contain only ASCII letters, digits, \"_\", \"-\" and \".\"; \(Self.quoted(name)) does not"
        }
        if name.hasPrefix("_") && name != ZoneID.defaultZoneName {
            return "zone names starting with \"_\" are reserved; only \(ZoneID.defaultZoneName) is allowed"
        }
        return nil
    }

    /// Why an owner name is invalid, or `nil` if it is valid.
    public func ownerNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "owner names cannot be empty" }
        if name.utf8.count > limits.maxNameLength { return "owner names have at most \(limits.maxNameLength) characters" }
        if !Self.allBytes(of: name, satisfy: { $0 > 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "/") }) {
            return "owner names are printable ASCII without spaces or \"/\"; \(Self.quoted(name)) is not"
        }
        return nil
    }

    // MARK: - Values

    /// Checks one value; the path (`fields.name` or `fields.name[3]`) is only built when there is a problem.
    private func check(_ value: FieldValue, in zone: ZoneID, name: String, index: Int?, into problems: inout [RecordProblem]) {
        func path() -> String { index.map { "fields.\(name)[\($0)]" } ?? "fields.\(name)" }
        switch value {
        case .double(let number) where !number.isFinite:
            problems.append(RecordProblem(.error, .fieldValue, at: path(), "DOUBLE values must be finite, found \(number)"))
        case .reference(let reference):
            if reference.zoneID != zone {
                problems.append(
                    RecordProblem(
                        .error, .reference, at: path(),
                        "references cannot cross zones: this record is in \(zone), the target in \(reference.zoneID)"))
            }
            if let problem = recordNameIssue(reference.recordName, rule: .reference, at: path(), prefix: "target: ") { problems.append(problem) }
        case .asset(let asset) where asset.size < 0:
            problems.append(RecordProblem(.error, .fieldValue, at: path(), "asset sizes cannot be negative"))
        case .location(let location):
            let numbers = [
                location.latitude, location.longitude, location.horizontalAccuracy, location.verticalAccuracy,
                location.altitude, location.speed, location.course,
            ].compactMap { $0 }
            if !numbers.allSatisfy(\.isFinite) {
                problems.append(RecordProblem(.error, .fieldValue, at: path(), "location numbers must be finite"))
            } else if abs(location.latitude) > 90 || abs(location.longitude) > 180 {
                problems.append(
                    RecordProblem(
                        .error, .fieldValue, at: path(),
                        "latitude must be within ±90 and longitude within ±180, found \(location.latitude), \(location.longitude)"))
            }
        case .list(let list):
            for (position, element) in list.elements.enumerated() {
                check(element, in: zone, name: name, index: position, into: &problems)
            }
        default:
            break
        }
    }

    /// Whether every UTF-8 byte of `text` passes `test`, over the string's contiguous storage.
    @inline(__always)
    private static func allBytes(of text: String, satisfy test: (UInt8) -> Bool) -> Bool {
        text.withUTF8Bytes { bytes in
            for byte in bytes where !test(byte) { return false }
            return true
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func quoted(_ text: String) -> String {
        let shown = text.count > 60 ? String(text.prefix(57)) + "…" : text
        return "\"\(shown.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : $0.escaped(asASCII: true) }.joined())\""
    }
}

extension Record {
    /// The bytes CloudKit counts toward the 1 MB record limit, estimated as field names plus raw values (strings as
    /// UTF-8, numbers as 8 bytes, references as their name and zone); assets are stored apart and count nothing.
    public var estimatedSize: Int { fields.estimatedSize }
}

extension FieldValue {
    /// The bytes this value counts toward a record's size.
    public var estimatedSize: Int {
        switch self {
        case .string(let text): text.utf8.count
        case .int64, .double, .timestamp: Self.numberSize
        case .bytes(let data): data.count
        case .reference(let reference):
            Self.referenceSize(
                nameBytes: reference.recordName.utf8.count, zoneBytes: reference.zoneID.zoneName.utf8.count + reference.zoneID.ownerName.utf8.count)
        case .asset: 0
        case .location: 64
        case .list(let list): list.elements.reduce(0) { $0 + $1.estimatedSize }
        }
    }

    /// What an INT64, DOUBLE or TIMESTAMP counts toward a record's size.
    public static let numberSize = 8

    /// What a reference counts toward a record's size: its target's name and zone (UTF-8 bytes), and 8 more.
    public static func referenceSize(nameBytes: Int, zoneBytes: Int) -> Int { nameBytes + zoneBytes + 8 }
}
