import FerryCore
import FerryJSON

/// Recognizes record lines that are already in canonical form and pass every check a line can pass on its own,
/// without decoding them into ``Record`` values: the fast path of `ferry verify`, whose bundles hold nothing else.
///
/// It recognizes, it does not parse: it accepts only the exact bytes ``Record/writeCloudKitJSON(to:includeSystemFields:)``
/// writes for a valid record of one file's type and zone, and only the common forms (strings that need no escapes;
/// every scalar type but LOCATION, and non-empty lists of them; system fields). Any other line, valid or not, is
/// declined, and the caller decodes it the full way, which names any problem. Acceptance promises what the full way
/// would find: the line decodes, re-encodes to the same bytes, fits the schema and CloudKit's rules, and has these
/// keys, DELETE_SELF targets and assets (held to that by tests and the `canonical` fuzz target).
///
/// ```swift
/// var scanner = CanonicalRecordScanner(recordType: "Car", zoneID: zone, fieldTypes: schema.recordTypes["Car"])
/// var facts = CanonicalRecordScanner.Facts()
/// guard let key = scanner?.accept(line, index: number, into: &facts) else { /* decode the line the full way */ }
/// ```
package struct CanonicalRecordScanner {
    /// What the checks across lines need of accepted lines, appended line after line.
    package struct Facts: Sendable {
        /// The targets of DELETE_SELF references, each with the index the caller gave the line holding it (not from a
        /// scanner made with `collectingReferences`, whose ``references`` hold them).
        package var deleteSelf: [(line: Int, target: RecordKey)] = []
        /// The assets referenced.
        package var assets: [(sha256: SHA256Digest, size: Int64)] = []
        /// Every reference's target in field order, with whether it is DELETE_SELF; only from a scanner made with
        /// `collectingReferences` (instead of ``deleteSelf``).
        package var references: [(target: RecordKey, deleteSelf: Bool)] = []
        /// What the last record accepted counts toward CloudKit's record size (``RecordValidator/Limits/maxRecordBytes``).
        package var recordBytes = 0

        /// No facts yet.
        package init() {}
    }

    /// The schema's fields of the file's type; `nil` to accept any valid field names and types.
    private let fieldTypes: [String: FieldType]?
    private let validator: RecordValidator
    private let collectsReferences: Bool
    private let recordType: String
    private let zoneID: ZoneID
    private let seed: RecordKey.Seed
    /// `"recordType":…,"zoneID":{…}}` after the record name: the bytes every record of the file ends with.
    private let tail: [UInt8]
    /// `,"zoneID":{…}}` after a reference's name: references may not leave the record's zone.
    private let referenceTail: [UInt8]
    /// The zone's two names' UTF-8 length, which a reference counts toward the record size (``FieldValue/referenceSize(nameBytes:zoneBytes:)``).
    private let zoneBytes: Int
    /// Field names and type tags of the records accepted (the few layouts a file's records have, most recent first),
    /// each with its hash, so that the many records sharing a layout hash nothing.
    private var acceptedLayouts: [(fields: [UInt8], layout: RecordSchema.Layout)] = []
    /// The field names and type tags of the line being scanned, each followed by a 0 byte: what
    /// ``RecordSchema/Layout`` hashes.
    private var fields: [UInt8] = []
    private static let maxAcceptedLayouts = 16

    /// A scanner for the lines of one record file; `nil` when the file's type or zone is itself invalid or its type is
    /// not in the schema (every line is then for the full checks to report).
    /// - Parameters:
    ///   - fieldTypes: the schema's fields of the record type.
    package init?(recordType: String, zoneID: ZoneID, fieldTypes: [String: FieldType]?, validator: RecordValidator = RecordValidator()) {
        guard let fieldTypes else { return nil }
        self.init(recordType: recordType, zoneID: zoneID, schema: fieldTypes, validator: validator, collectingReferences: false)
    }

    /// A scanner for records of one type and zone that may have any valid fields; `nil` when the type or zone is
    /// itself invalid.
    ///
    /// There is no schema to fit, and it can collect every reference (``Facts/references``, instead of only the
    /// DELETE_SELF targets in ``Facts/deleteSelf``): what admitting records into a bundle needs.
    package init?(recordType: String, zoneID: ZoneID, validator: RecordValidator, collectingReferences: Bool) {
        self.init(recordType: recordType, zoneID: zoneID, schema: nil, validator: validator, collectingReferences: collectingReferences)
    }

    private init?(
        recordType: String, zoneID: ZoneID, schema fieldTypes: [String: FieldType]?, validator: RecordValidator, collectingReferences: Bool
    ) {
        guard validator.identifierProblem(recordType, what: "record type") == nil,
            validator.zoneNameProblem(zoneID.zoneName) == nil, validator.ownerNameProblem(zoneID.ownerName) == nil
        else { return nil }
        self.fieldTypes = fieldTypes
        self.validator = validator
        self.recordType = recordType
        self.zoneID = zoneID
        collectsReferences = collectingReferences
        seed = RecordKey.Seed(zoneID)
        var json = JSONWriter()
        json.raw(",\"recordType\":")
        json.string(recordType)
        json.raw(",\"zoneID\":")
        zoneID.writeCloudKitJSON(to: &json)
        json.byte(UInt8(ascii: "}"))
        tail = json.bytes
        json.reset()
        json.raw(",\"zoneID\":")
        zoneID.writeCloudKitJSON(to: &json)
        json.byte(UInt8(ascii: "}"))
        referenceTail = json.bytes
        zoneBytes = zoneID.zoneName.utf8.count + zoneID.ownerName.utf8.count
    }

    /// Accepts a line (without its newline) that is a canonical, valid record of this file, appending its facts.
    /// - Parameter index: the line's index, recorded with its DELETE_SELF targets.
    /// - Returns: the record's key, or `nil` if the line is declined (and `facts` is left as it was).
    package mutating func accept(_ line: UnsafeRawBufferPointer, index: Int, into facts: inout Facts) -> RecordKey? {
        acceptWithLayout(line, index: index, into: &facts)?.key
    }

    /// Accepts a line like ``accept(_:index:into:)``; the record's key and layout (its type, zone, field names and
    /// types), or `nil` if the line is declined.
    package mutating func acceptWithLayout(_ line: UnsafeRawBufferPointer, index: Int, into facts: inout Facts) -> (
        key: RecordKey, layout: RecordSchema.Layout
    )? {
        let deleteSelfCount = facts.deleteSelf.count
        let assetCount = facts.assets.count
        let referenceCount = facts.references.count
        var cursor = Cursor(line)
        if let accepted = scan(&cursor, line: index, into: &facts) { return accepted }
        facts.deleteSelf.removeSubrange(deleteSelfCount...)
        facts.assets.removeSubrange(assetCount...)
        facts.references.removeSubrange(referenceCount...)
        return nil
    }

    /// Scans a whole record line; the record's key and layout, or `nil` to decline it.
    private mutating func scan(_ cursor: inout Cursor, line: Int, into facts: inout Facts) -> (key: RecordKey, layout: RecordSchema.Layout)? {
        guard cursor.skip("{") else { return nil }
        if cursor.skip("\"created\":") {
            guard cursor.stamp(), cursor.skip(",") else { return nil }
        }
        guard cursor.skip("\"fields\":{") else { return nil }
        fields.removeAll(keepingCapacity: true)
        var size = 0
        var previousName: UnsafeRawBufferPointer?
        if !cursor.skip("}") {
            repeat {
                guard let name = cursor.quotedIdentifier(), previousName.map({ Self.precedes($0, name) }) ?? true,
                    cursor.skip(":{\"type\":\""), let tag = cursor.until(UInt8(ascii: "\"")), let type = FieldType(tag: tag),
                    cursor.skip(",\"value\":"), let valueSize = value(type, &cursor, line: line, into: &facts), cursor.skip("}")
                else { return nil }
                previousName = name
                size += name.count + valueSize
                fields.append(contentsOf: name)
                fields.append(0)
                fields.append(contentsOf: tag)
                fields.append(0)
            } while cursor.skip(",")
            guard cursor.skip("}") else { return nil }
        }
        if cursor.skip(",\"modified\":") {
            guard cursor.stamp() else { return nil }
        }
        if cursor.skip(",\"recordChangeTag\":") {
            guard cursor.plainString() != nil else { return nil }
        }
        guard cursor.skip(",\"recordName\":"), let name = recordName(&cursor), cursor.skip(tail), cursor.isAtEnd,
            size <= validator.limits.maxRecordBytes, let layout = validLayout()
        else { return nil }
        facts.recordBytes = size
        return (seed.key(recordName: name), layout)
    }

    /// The layout of the fields just scanned if they are valid names of the schema's types: checked once per distinct
    /// layout.
    private mutating func validLayout() -> RecordSchema.Layout? {
        if let index = acceptedLayouts.firstIndex(where: { $0.fields == fields }) {
            let layout = acceptedLayouts[index].layout
            if index > 0 { acceptedLayouts.swapAt(index, index - 1) }
            return layout
        }
        let parts = fields.split(separator: 0, omittingEmptySubsequences: false)
        var index = 0
        while index + 1 < parts.count {
            let name = String(decoding: parts[index], as: UTF8.self)
            guard validator.identifierProblem(name, what: "field name") == nil, !RecordValidator.isReserved(name),
                let type = FieldType(tag: String(decoding: parts[index + 1], as: UTF8.self)),
                fieldTypes.map({ $0[name]?.accepts(type) == true }) ?? true
            else { return nil }
            index += 2
        }
        let layout = RecordSchema.Layout(recordType: recordType, fields: fields)
        if acceptedLayouts.count == Self.maxAcceptedLayouts { acceptedLayouts.removeLast() }
        acceptedLayouts.insert((fields, layout), at: 0)
        return layout
    }

    /// Scans a field's value; the bytes it counts toward the record size, or `nil` to decline.
    private func value(_ type: FieldType, _ cursor: inout Cursor, line: Int, into facts: inout Facts) -> Int? {
        switch type {
        case .scalar(let scalar):
            return self.scalar(scalar, &cursor, line: line, into: &facts)
        case .list(let element?) where element != .location:
            // An empty list is declined: its element type is the decoder's to settle.
            guard cursor.skip("["), !cursor.skip("]") else { return nil }
            var size = 0
            repeat {
                guard let elementSize = scalar(element, &cursor, line: line, into: &facts) else { return nil }
                size += elementSize
            } while cursor.skip(",")
            return cursor.skip("]") ? size : nil
        case .list:
            return nil
        }
    }

    private func scalar(_ type: ScalarType, _ cursor: inout Cursor, line: Int, into facts: inout Facts) -> Int? {
        switch type {
        case .string:
            return cursor.plainString()?.count
        case .int64, .timestamp:
            return cursor.integer() == nil ? nil : FieldValue.numberSize
        case .double:
            return cursor.double() ? FieldValue.numberSize : nil
        case .bytes:
            return cursor.base64()
        case .reference:
            guard cursor.skip("{\"action\":\"") else { return nil }
            let deleteSelf: Bool
            if cursor.skip("NONE\"") || cursor.skip("VALIDATE\"") {
                deleteSelf = false
            } else if cursor.skip("DELETE_SELF\"") {
                deleteSelf = true
            } else {
                return nil
            }
            guard cursor.skip(",\"recordName\":"), let name = recordName(&cursor), cursor.skip(referenceTail) else { return nil }
            if collectsReferences {
                facts.references.append((seed.key(recordName: name), deleteSelf))
            } else if deleteSelf {
                facts.deleteSelf.append((line, seed.key(recordName: name)))
            }
            return FieldValue.referenceSize(nameBytes: name.count, zoneBytes: zoneBytes)
        case .asset:
            guard cursor.skip("{") else { return nil }
            if cursor.skip("\"fileName\":") {
                guard cursor.plainString() != nil, cursor.skip(",") else { return nil }
            }
            guard cursor.skip("\"sha256\":\""), let digest = cursor.lowercaseDigest(), cursor.skip("\",\"size\":"),
                let size = cursor.integer(), size >= 0, cursor.skip("}")
            else { return nil }
            facts.assets.append((digest, size))
            return 0
        case .location:
            return nil
        }
    }

    /// A quoted record name that needs no escapes and that CloudKit allows (the validator's rule, on the bytes).
    private func recordName(_ cursor: inout Cursor) -> UnsafeRawBufferPointer? {
        guard let name = cursor.plainString(), validator.recordNameProblem(utf8: name) == nil else { return nil }
        return name
    }

    /// Whether `lhs` sorts strictly before `rhs` by bytes, the order of canonical keys.
    private static func precedes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        lhs.lexicographicallyPrecedes(rhs)
    }
}

/// A position in a line, with the small recognizers the scanner is made of; each consumes only what it accepts.
private struct Cursor {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    /// Skips an exact literal.
    mutating func skip(_ literal: StaticString) -> Bool {
        skip(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Skips exact bytes.
    mutating func skip(_ literal: [UInt8]) -> Bool {
        literal.withUnsafeBytes { skip($0) }
    }

    private mutating func skip(_ literal: UnsafeRawBufferPointer) -> Bool {
        guard literal.count <= bytes.count - offset,
            UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + literal.count)]).hasSameBytes(as: literal)
        else { return false }
        offset += literal.count
        return true
    }

    /// The bytes up to (not including) `terminator`, which is skipped too.
    mutating func until(_ terminator: UInt8) -> UnsafeRawBufferPointer? {
        let start = offset
        while offset < bytes.count {
            if bytes[offset] == terminator {
                defer { offset += 1 }
                return UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
            }
            offset += 1
        }
        return nil
    }

    /// A quoted name of ASCII letters, digits and `_` (which needs no escapes), without its quotes.
    mutating func quotedIdentifier() -> UnsafeRawBufferPointer? {
        guard skip("\"") else { return nil }
        let start = offset
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                offset += 1
            case UInt8(ascii: "\""):
                defer { offset += 1 }
                return offset > start ? UnsafeRawBufferPointer(rebasing: bytes[start..<offset]) : nil
            default:
                return nil
            }
        }
        return nil
    }

    /// A quoted string that needs no escapes, without its quotes (``JSONStringBytes/plainContentEnd(_:from:)``).
    mutating func plainString() -> UnsafeRawBufferPointer? {
        guard skip("\""), let end = JSONStringBytes.plainContentEnd(bytes, from: offset) else { return nil }
        defer { offset = end + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    /// A record stamp as the canonical form writes it: `{["deviceID":…,]"timestamp":…[,"userRecordName":…]}`.
    mutating func stamp() -> Bool {
        guard skip("{") else { return false }
        if skip("\"deviceID\":") {
            guard plainString() != nil, skip(",") else { return false }
        }
        guard skip("\"timestamp\":"), integer() != nil else { return false }
        if skip(",\"userRecordName\":") {
            guard plainString() != nil else { return false }
        }
        return skip("}")
    }

    /// An integer as the canonical form writes it (no `-0`, no leading zeros, no fraction or exponent) in Int64 range.
    mutating func integer() -> Int64? {
        let start = offset
        let negative = skip("-")
        guard offset < bytes.count, Self.isDigit(bytes[offset]) else { return nil }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            guard !negative else { return nil }
            return offset < bytes.count && Self.isDigit(bytes[offset]) ? nil : 0
        }
        var value: Int64 = 0
        while offset < bytes.count, Self.isDigit(bytes[offset]) {
            let digit = Int64(bytes[offset] &- UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 {
                offset = start
                return nil
            }
            value = next
            offset += 1
        }
        return value
    }

    /// A finite double as the canonical form writes it: Swift's shortest round-trip text, checked by writing it back.
    mutating func double() -> Bool {
        let start = offset
        // Swift writes at most 24 characters; a longer run cannot be canonical.
        while offset < bytes.count, offset - start <= 24, Self.isNumberByte(bytes[offset]) { offset += 1 }
        let token = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
        // A token the decoder reads as a double has a fraction or an exponent; Swift always writes one or the other.
        guard let first = token.first, first == UInt8(ascii: "-") || Self.isDigit(first),
            let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite
        else { return false }
        var text = value.description
        return text.withUTF8 { $0.elementsEqual(token) }
    }

    /// A quoted base64 string in the canonical form (standard alphabet, padded, unused bits zero); its decoded length.
    mutating func base64() -> Int? {
        guard let text = plainString(), text.count % 4 == 0 else { return nil }
        var padding = 0
        for (index, byte) in text.enumerated() {
            if byte == UInt8(ascii: "=") {
                // Padding only in the last two places, and nothing but padding after it.
                guard index >= text.count - 2 else { return nil }
                padding += 1
            } else {
                guard padding == 0, Self.base64Value(byte) != nil else { return nil }
            }
        }
        if padding > 0 {
            // The last character before the padding may not carry bits the decoded bytes leave unused.
            guard let last = Self.base64Value(text[text.count - padding - 1]) else { return nil }
            let unused: UInt8 = padding == 1 ? 0b11 : 0b1111
            guard last & unused == 0 else { return nil }
        }
        return text.count / 4 * 3 - padding
    }

    /// 64 lowercase hex digits (what the canonical form writes), as a digest.
    mutating func lowercaseDigest() -> SHA256Digest? {
        guard bytes.count - offset >= 64 else { return nil }
        let hex = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 64)])
        for byte in hex where !(Self.isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))) { return nil }
        guard let digest = SHA256Digest(hex: hex) else { return nil }
        offset += 64
        return digest
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
    }

    private static func base64Value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
