import FerryCore
import FerryJSON

/// Rewrites a record line into its canonical form without building a ``Record``: the fast path of `ferry pack`.
///
/// It follows ``CloudKitJSONDecoder`` step by step, with the same scanner, the same string and number rules, and the
/// decoder's own code for values it has no shortcut for (assets, bytes, locations, untagged values), so a line it
/// transcodes gets the bytes that decoding it and writing the record with
/// ``Record/writeCloudKitJSON(to:includeSystemFields:)`` would give (held to that by tests and the `transcode` fuzz
/// target). The shortcuts are for strings, numbers, timestamps, references and lists of them, which are copied or
/// rewritten with no string or record built.
///
/// It declines (returns `nil`) deletions, repeated keys, field names with escapes, and every line the decoder would
/// refuse; the caller decodes those the full way, which reports the problem. It does not check CloudKit's rules:
/// ``CanonicalRecordScanner`` does that on the bytes it writes.
///
/// ```swift
/// var transcoder = CloudKitJSONTranscoder(decoder: decoder)
/// var json = JSONWriter()
/// guard let record = transcoder.transcode(line, into: &json) else { /* decode the line the full way */ }
/// ```
package struct CloudKitJSONTranscoder {
    /// What the caller needs of a transcoded record besides its canonical bytes.
    package struct Transcoded {
        /// The record type.
        package var recordType: String
        /// The record's name, when it was asked for (``transcode(_:into:includeSystemFields:naming:)``).
        package var recordName: String?
        /// The record's zone.
        package var zoneID: ZoneID
        /// The assets of its fields, with each field's name, in field order.
        package var assets: [(field: String, asset: Asset)]
    }

    /// A zone ID as some line wrote it, with what it decodes to and its canonical bytes.
    private struct KnownZone {
        var input: [UInt8]
        var zoneID: ZoneID
        var canonical: [UInt8]
    }

    /// Where a field's parts are: its name (offsets into the line), its bytes in ``fieldsOut`` and its assets in
    /// ``assets``.
    private struct FieldSpan {
        var name: Range<Int>
        var output: Range<Int>
        var assets: Range<Int>
    }

    private let decoder: CloudKitJSONDecoder
    /// The fields of the line being transcoded, in input order; sorted when the record is written.
    private var fieldsOut = JSONWriter(capacity: 1024)
    private var spans: [FieldSpan] = []
    private var assets: [(field: String, asset: Asset)] = []
    /// Zones and record types seen recently (most files have a handful), so that their strings are built once.
    private var zones: [KnownZone] = []
    private var recordTypes: [(bytes: [UInt8], string: String)] = []
    private static let cacheSize = 8

    /// A transcoder that decodes what it has no shortcut for with `decoder` (and its asset resolver).
    package init(decoder: CloudKitJSONDecoder) {
        self.decoder = decoder
    }

    /// Appends the canonical form of a record line to `json`; without its system fields (change tag, times) when
    /// `includeSystemFields` is `false`, as ``Record/writeCloudKitJSON(to:includeSystemFields:)`` writes the content
    /// that ``Record/contentDigest`` hashes.
    /// - Returns: the record's type, zone and assets, and its name with `naming` (a string made per line); `nil` if the
    ///   line is declined (and `json` is left as it was).
    package mutating func transcode(
        _ line: UnsafeRawBufferPointer, into json: inout JSONWriter, includeSystemFields: Bool = true, naming: Bool = false
    ) -> Transcoded? {
        let start = json.count
        do {
            if let transcoded = try record(line, into: &json, includeSystemFields: includeSystemFields, naming: naming) { return transcoded }
        } catch {}
        json.truncate(to: start)
        return nil
    }

    // MARK: - Records

    /// Mirrors the decoder's record loop; `nil` for what it leaves to the decoder.
    private mutating func record(
        _ line: UnsafeRawBufferPointer, into json: inout JSONWriter, includeSystemFields: Bool, naming: Bool
    ) throws -> Transcoded? {
        var scanner = JSONScanner(line)
        guard try scanner.peek() == .object else { return nil }
        try scanner.beginObject()
        var recordName: JSONRawString?
        var recordType: String?
        var zone: Int?
        var fieldsOffset: Int?
        var fieldsDone = false
        var created: RecordStamp?
        var modified: RecordStamp?
        var changeTag: JSONRawString?
        spans.removeAll(keepingCapacity: true)
        assets.removeAll()
        fieldsOut.reset()
        // Forgotten between lines, never within one: a line's zones are named by their index in the cache.
        if zones.count >= Self.cacheSize { zones.removeAll(keepingCapacity: true) }
        var seen: UInt16 = 0
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            func once(_ bit: UInt16) -> Bool {
                defer { seen |= bit }
                return seen & bit == 0
            }
            switch key {
            case "recordName":
                guard once(1 << 0), try scanner.peek() == .string else { return nil }
                recordName = try scanner.rawString()
            case "recordType":
                guard once(1 << 1), try scanner.peek() == .string else { return nil }
                recordType = try self.recordType(&scanner)
            case "zoneID":
                guard once(1 << 2) else { return nil }
                zone = try self.zone(&scanner, line)
            case "fields":
                guard once(1 << 3) else { return nil }
                if let zone {
                    guard try fields(&scanner, line, zone: zone) else { return nil }
                    fieldsDone = true
                } else {
                    // References without a zone get the record's, which may come later: read the fields at the end.
                    fieldsOffset = scanner.offset
                    try scanner.skipValue()
                }
            case "recordChangeTag":
                guard once(1 << 4), try scanner.peek() == .string else { return nil }
                changeTag = try scanner.rawString()
            case "created":
                guard once(1 << 5) else { return nil }
                created = try decoder.stamp(&scanner, path: "created")
            case "modified":
                guard once(1 << 6) else { return nil }
                modified = try decoder.stamp(&scanner, path: "modified")
            case "pluginFields", "shortGUID", "createShortGUID", "publicPermission":
                guard once(1 << 8) else { return nil }
                try scanner.skipValue()
            case "parent", "share", "participants", "owner", "currentUserParticipant":
                guard try scanner.peek() == .null else { return nil }
                try scanner.null()
            default:
                // "deleted" (a deletion is the decoder's) and unknown keys (an error).
                return nil
            }
        }
        try scanner.finish()
        guard let recordName, let recordType else { return nil }
        let zoneIndex = zone ?? defaultZone()
        if !fieldsDone, let fieldsOffset {
            scanner.rewind(to: fieldsOffset)
            guard try fields(&scanner, line, zone: zoneIndex) else { return nil }
        }
        guard sortFields(line) else { return nil }
        // In field order, as the record lists them.
        if assets.count > 1 { assets = spans.flatMap { assets[$0.assets] } }

        let system = includeSystemFields ? SystemFields(changeTag: changeTag?.string, created: created, modified: modified) : nil
        let name = naming ? recordName.string : nil
        Record.writeDictionary(system: system, to: &json) { json in
            fieldsOut.bytes.withUnsafeBytes { output in
                for (index, span) in spans.enumerated() {
                    if index > 0 { json.byte(UInt8(ascii: ",")) }
                    json.raw(UnsafeRawBufferPointer(rebasing: output[span.output]))
                }
            }
        } identity: { json in
            json.raw("\"recordName\":")
            json.string(recordName)
            json.raw(",\"recordType\":")
            json.string(recordType)
            json.raw(",\"zoneID\":")
            json.raw(zones[zoneIndex].canonical)
        }
        return Transcoded(recordType: recordType, recordName: name, zoneID: zones[zoneIndex].zoneID, assets: assets)
    }

    /// Puts the fields in canonical order (UTF-8 bytes of their names, as ``RecordFields`` keeps them); `false` if a
    /// name appears twice.
    private mutating func sortFields(_ line: UnsafeRawBufferPointer) -> Bool {
        func name(_ span: FieldSpan) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: line[span.name]) }
        let ordered = spans.indices.dropFirst().allSatisfy { name(spans[$0 - 1]).lexicographicallyPrecedes(name(spans[$0])) }
        if ordered { return true }
        spans.sort { name($0).lexicographicallyPrecedes(name($1)) }
        return spans.indices.dropFirst().allSatisfy { !name(spans[$0 - 1]).elementsEqual(name(spans[$0])) }
    }

    /// A record type, as a string built once for each type seen recently.
    private mutating func recordType(_ scanner: inout JSONScanner) throws -> String {
        let text = try scanner.rawString()
        if let unescaped = text.unescaped { return unescaped }
        if let index = recordTypes.firstIndex(where: { $0.bytes.elementsEqual(text.raw) }) { return recordTypes[index].string }
        let string = String(decoding: text.raw, as: UTF8.self)
        if recordTypes.count == Self.cacheSize { recordTypes.removeLast() }
        recordTypes.insert((Array(text.raw), string), at: 0)
        return string
    }

    /// A zone ID object, decoded by the decoder the first time its bytes are seen; its index in ``zones``.
    private mutating func zone(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer) throws -> Int {
        _ = try scanner.peek()
        let start = scanner.offset
        try scanner.skipValue()
        let input = UnsafeRawBufferPointer(rebasing: line[start..<scanner.offset])
        if let index = zones.firstIndex(where: { $0.input.elementsEqual(input) }) { return index }
        let end = scanner.offset
        scanner.rewind(to: start)
        let zoneID = try decoder.zoneID(&scanner, path: "zoneID")
        scanner.rewind(to: end)
        return remember(KnownZone(input: Array(input), zoneID: zoneID, canonical: Self.canonical(zoneID)))
    }

    /// The index of the default zone, which a record without a zone ID is in.
    private mutating func defaultZone() -> Int {
        if let index = zones.firstIndex(where: { $0.input.isEmpty }) { return index }
        return remember(KnownZone(input: [], zoneID: .default, canonical: Self.canonical(.default)))
    }

    private mutating func remember(_ zone: KnownZone) -> Int {
        zones.append(zone)
        return zones.count - 1
    }

    private static func canonical(_ zoneID: ZoneID) -> [UInt8] {
        var json = JSONWriter(capacity: 64)
        zoneID.writeCloudKitJSON(to: &json)
        return json.bytes
    }

    // MARK: - Fields

    /// Transcodes the fields object into ``fieldsOut`` and ``spans``; `false` to decline.
    private mutating func fields(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, zone: Int) throws -> Bool {
        guard try scanner.peek() == .object else { return false }
        try scanner.beginObject()
        guard let base = line.baseAddress else { return false }
        var first = true
        while let name = try scanner.nextRawKey(&first) {
            // ASCII names only: for those, the decoder's name comparisons (String's) agree with byte comparisons.
            guard name.unescaped == nil, name.raw.allSatisfy({ $0 < 0x80 }), let nameStart = name.raw.baseAddress.map({ $0 - base })
            else { return false }
            let start = fieldsOut.count
            let firstAsset = assets.count
            fieldsOut.string(name)
            fieldsOut.byte(UInt8(ascii: ":"))
            switch try field(&scanner, line, name: name, zone: zone) {
            case nil: return false
            case false?: fieldsOut.truncate(to: start)  // a null value: the decoder drops the field
            case true?:
                spans.append(
                    FieldSpan(name: nameStart..<(nameStart + name.raw.count), output: start..<fieldsOut.count, assets: firstAsset..<assets.count))
            }
        }
        return true
    }

    /// Transcodes `{"type":…,"value":…}` (keys in either order): `true` if written, `false` for a null value, `nil`
    /// to decline.
    private mutating func field(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, name: JSONRawString, zone: Int) throws -> Bool? {
        guard try scanner.peek() == .object else { return nil }
        try scanner.beginObject()
        var tag: FieldType?
        var tagged = false
        var valueOffset: Int?
        // A string or number value is read once, even before its type: most exporters write the value first.
        var scalar: ScalarToken?
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "type":
                guard !tagged, try scanner.peek() == .string, let type = CloudKitJSONDecoder.fieldType(tag: try scanner.rawString()) else {
                    return nil
                }
                tag = type
                tagged = true
            case "value":
                guard valueOffset == nil else { return nil }
                valueOffset = scanner.offset
                scalar = try ScalarToken(&scanner)
                if scalar == nil { try scanner.skipValue() }
            default:
                return nil
            }
        }
        guard let valueOffset else { return nil }
        if let scalar, case .scalar(let type)? = tag {
            let start = fieldsOut.count
            fieldsOut.raw(FieldType.scalar(type).openingJSON)
            if write(scalar, as: type) {
                fieldsOut.byte(UInt8(ascii: "}"))
                return true
            }
            fieldsOut.truncate(to: start)
        }
        let end = scanner.offset
        scanner.rewind(to: valueOffset)
        defer { scanner.rewind(to: end) }
        if try scanner.peek() == .null { return false }
        let start = fieldsOut.count
        if let tag, try shortcut(tag, &scanner, line, zone: zone) { return true }
        // No shortcut for this type or value: the decoder's code, from the value's start.
        fieldsOut.truncate(to: start)
        scanner.rewind(to: valueOffset)
        return try decoded(tag, &scanner, name: name, zone: zone)
    }

    /// Decodes a value with the decoder and writes it, as the decoder and the record writer would.
    private mutating func decoded(_ tag: FieldType?, _ scanner: inout JSONScanner, name: JSONRawString, zone: Int) throws -> Bool {
        var context = FieldContext(name: name.string)
        guard var value = try decoder.value(&scanner, tag: tag, &context) else { return false }
        if !context.referencesWithoutZone.isEmpty {
            value = value.settingZone(zones[zone].zoneID, ofReferencesAt: context.referencesWithoutZone)
        }
        value.writeCloudKitJSON(to: &fieldsOut)
        for asset in value.assets { assets.append((context.name, asset)) }
        return true
    }

    /// Writes a field of a type with a shortcut; `false` (with partial output) if the type or value has none.
    private mutating func shortcut(_ tag: FieldType, _ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, zone: Int) throws -> Bool {
        switch tag {
        case .scalar(let type):
            guard Self.hasShortcut(type) else { return false }
            fieldsOut.raw(tag.openingJSON)
            guard try scalar(type, &scanner, line, zone: zone) else { return false }
        case .list(let type?):
            guard Self.hasShortcut(type), try scanner.peek() == .array else { return false }
            fieldsOut.raw(tag.openingJSON)
            fieldsOut.byte(UInt8(ascii: "["))
            try scanner.beginArray()
            var first = true
            var count = 0
            while try scanner.nextElement(&first) {
                if count > 0 { fieldsOut.byte(UInt8(ascii: ",")) }
                count += 1
                guard try scalar(type, &scanner, line, zone: zone) else { return false }
            }
            fieldsOut.byte(UInt8(ascii: "]"))
        case .list(nil):
            return false
        }
        fieldsOut.byte(UInt8(ascii: "}"))
        return true
    }

    private static func hasShortcut(_ type: ScalarType) -> Bool {
        switch type {
        case .string, .int64, .double, .timestamp, .reference: true
        case .bytes, .asset, .location: false
        }
    }

    /// Writes one value of a type with a shortcut, as the decoder would read it; `false` for a form the decoder reads
    /// another way (a number in a string, say).
    private mutating func scalar(_ type: ScalarType, _ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, zone: Int) throws -> Bool {
        switch type {
        case .string, .int64, .timestamp, .double:
            guard let scalar = try ScalarToken(&scanner) else { return false }
            return write(scalar, as: type)
        case .reference:
            return try reference(&scanner, line, zone: zone)
        case .bytes, .asset, .location:
            return false
        }
    }

    /// A string or number as read, before it is written as a value of some type.
    private enum ScalarToken {
        case string(JSONRawString)
        case number(JSONScanner.Number)

        /// Reads the next value if it is a string or a number; `nil` (having read nothing) for any other kind.
        init?(_ scanner: inout JSONScanner) throws {
            switch try scanner.peek() {
            case .string: self = .string(try scanner.rawString())
            case .number: self = .number(try scanner.number())
            default: return nil
            }
        }
    }

    /// Writes a string or number as a value of a type, as the decoder would read it; `false` for a form the decoder
    /// reads another way or refuses (a number in a string, a fraction as an integer, say), and for other types.
    private mutating func write(_ scalar: ScalarToken, as type: ScalarType) -> Bool {
        switch (type, scalar) {
        case (.string, .string(let text)):
            fieldsOut.string(text)
        // The decoder's rule (wholeNumber): integers, and doubles that are whole numbers in range.
        case (.int64, .number(.integer(let value))), (.timestamp, .number(.integer(let value))):
            fieldsOut.integer(value)
        case (.int64, .number(.double(let value))), (.timestamp, .number(.double(let value))):
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return false }
            fieldsOut.integer(exact)
        case (.double, .number(.integer(let value))): fieldsOut.double(Double(value))
        case (.double, .number(.unsigned(let value))): fieldsOut.double(Double(value))
        case (.double, .number(.double(let value))): fieldsOut.double(value)
        default: return false
        }
        return true
    }

    /// Writes a reference: `{"action":…,"recordName":…,"zoneID":…}`, in the record's zone when it names none.
    private mutating func reference(_ scanner: inout JSONScanner, _ line: UnsafeRawBufferPointer, zone: Int) throws -> Bool {
        guard try scanner.peek() == .object else { return false }
        try scanner.beginObject()
        var name: JSONRawString?
        var target = zone
        var action = Reference.Action.none
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            switch key {
            case "recordName":
                guard try scanner.peek() == .string else { return false }
                name = try scanner.rawString()
            case "zoneID":
                target = try self.zone(&scanner, line)
            case "action":
                guard try scanner.peek() == .string else { return false }
                switch try scanner.rawString() {
                case "NONE": action = .none
                case "DELETE_SELF": action = .deleteSelf
                case "VALIDATE": action = .validate
                default: return false
                }
            default:
                return false
            }
        }
        guard let name else { return false }
        fieldsOut.raw(action.openingJSON)
        fieldsOut.string(name)
        fieldsOut.raw(",\"zoneID\":")
        fieldsOut.raw(zones[target].canonical)
        fieldsOut.byte(UInt8(ascii: "}"))
        return true
    }
}
