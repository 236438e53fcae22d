import FerryCore
import FerryPlist
import FerryRecords
import Foundation

extension ArchiveCacheMapper {
    /// One object as a record or deletion; `nil` when it is up to date and only pending changes are wanted.
    func map(_ item: Item, position: Int) throws -> Mapped? {
        let recordType = options.recordType ?? item.className ?? "Item"
        let property = { (name: String) in item.properties.first { $0.name == name }?.value }
        let status = property(options.statusProperty).flatMap(Self.integer)
        if options.pendingOnly, status == 1 { return nil }
        var problems: [String] = []
        var name: String?
        var zone = options.zone.map { ZoneID(zoneName: $0) } ?? .default
        var identityProperty: String?
        for candidate in [options.nameProperty, "recordID", "recordName", "tempID"].compactMap({ $0 }) {
            guard let value = property(candidate) else { continue }
            if let recordID = Self.recordID(value) {
                name = recordID.recordName
                zone = ZoneID(zoneName: recordID.zoneID.zoneName, ownerName: recordID.zoneID.ownerName)
            } else if let text = Self.stringValue(value), !text.isEmpty {
                let bare = text.hasSuffix("-Temp") ? String(text.dropLast(5)) : text
                name = UUID(uuidString: bare) != nil ? "\(recordType)\(options.separator)\(bare.uppercased())" : bare
            }
            if name != nil {
                identityProperty = candidate
                break
            }
        }
        let recordName = name ?? "\(recordType)\(options.separator)\(RecordNaming.uuidV5("\(digest)/\(position)").text)"
        let origin = "\(recordType) #\(position)"
        if status == 2 {
            return Mapped(change: .deletion(Deletion(recordType: recordType, recordName: recordName, zoneID: zone)), origin: origin, problems: [])
        }
        var fields: [String: FieldValue] = [:]
        for (key, value) in item.properties
        where key != identityProperty && key != options.statusProperty && !Self.identityProperties.contains(key) {
            do {
                if let converted = try field(value, zone: zone, problems: &problems, name: key) {
                    let fieldName = RecordValidator.reservedFieldNames.contains(key) ? key + "Value" : key
                    fields[fieldName] = converted
                }
            } catch {
                problems.append("\(key): \(error)")
            }
        }
        let record = Record(recordType: recordType, recordName: recordName, zoneID: zone, fields: RecordFields(fields))
        return Mapped(change: .record(record), origin: origin, problems: problems)
    }

    static func integer(_ value: ArchivedValue) -> Int64? {
        switch value {
        case .integer(let number): return number
        case .unsigned(let number): return Int64(exactly: number)
        case .bool(let flag): return flag ? 1 : 0
        case .object(let object): if case .number(let inner) = object.content { return integer(inner) }
        default: break
        }
        return nil
    }

    static func recordID(_ value: ArchivedValue) -> ArchivedRecordID? {
        switch value {
        case .object(let object):
            if case .recordID(let recordID) = object.content { return recordID }
            if case .data(let bytes) = object.content { return try? PlistDocument(bytes: bytes).archivedRecordID() }
        case .data(let bytes): return try? PlistDocument(bytes: bytes).archivedRecordID()
        default: break
        }
        return nil
    }

    /// A property value as a field value, or `nil` for none (null, or not representable: reported).
    func field(_ value: ArchivedValue, zone: ZoneID, problems: inout [String], name: String) throws -> FieldValue? {
        switch value {
        case .null: return nil
        case .bool(let flag): return .int64(flag ? 1 : 0)
        case .integer(let number): return .int64(number)
        case .unsigned(let number):
            guard let number = Int64(exactly: number) else {
                problems.append("\(name): \(number) does not fit INT64; kept as text")
                return .string(String(number))
            }
            return .int64(number)
        case .real(let number): return number.isFinite ? .double(number) : nil
        case .string(let text): return .string(text)
        case .data(let bytes): return bytes.count > options.assetThreshold ? .asset(try assets.addBytes(bytes)) : .bytes(Data(bytes))
        case .date(let seconds): return .timestamp(ISO8601Timestamp.millisecondsSince1970(secondsSince2001: seconds))
        case .array(let elements): return try list(elements, zone: zone, problems: &problems, name: name)
        case .dictionary, .cycle:
            problems.append("\(name): a nested dictionary or object graph has no CloudKit field type; left out")
            return nil
        case .object(let object): return try objectField(object, zone: zone, problems: &problems, name: name)
        }
    }

    private func objectField(_ object: ArchivedObject, zone: ZoneID, problems: inout [String], name: String) throws -> FieldValue? {
        switch object.content {
        case .string(let text), .attributedString(let text, _): return .string(text)
        case .data(let bytes): return try field(.data(bytes), zone: zone, problems: &problems, name: name)
        case .date(let seconds): return try field(.date(seconds), zone: zone, problems: &problems, name: name)
        case .number(let inner): return try field(inner, zone: zone, problems: &problems, name: name)
        case .decimal(let text): return Double(text).map(FieldValue.double) ?? .string(text)
        case .uuid(let uuid): return .string(uuid.text)
        case .url(let relative, _): return .string(relative)
        case .null: return nil
        case .array(let elements), .set(let elements), .orderedSet(let elements):
            return try list(elements, zone: zone, problems: &problems, name: name)
        case .location(let location):
            return .location(
                Location(
                    latitude: location.latitude, longitude: location.longitude, horizontalAccuracy: location.horizontalAccuracy,
                    verticalAccuracy: location.verticalAccuracy, altitude: location.altitude, speed: location.speed, course: location.course,
                    timestamp: location.timestamp.map { ISO8601Timestamp.millisecondsSince1970(secondsSince2001: $0) }))
        case .recordID(let recordID):
            return .reference(Reference(recordName: recordID.recordName, zoneID: zone, action: .none))
        case .reference(let reference):
            return .reference(Reference(recordName: reference.recordID.recordName, zoneID: zone, action: reference.action == 1 ? .deleteSelf : .none))
        default:
            problems.append("\(name): an archived \(object.archivedClass.name) has no CloudKit field type; left out")
            return nil
        }
    }

    private func list(_ elements: [ArchivedValue], zone: ZoneID, problems: inout [String], name: String) throws -> FieldValue? {
        var values: [FieldValue] = []
        for element in elements {
            var ignored: [String] = []
            guard let value = try field(element, zone: zone, problems: &ignored, name: name), value.scalarType != nil else {
                problems.append("\(name): a list element has no CloudKit list type; the list is left out")
                return nil
            }
            values.append(value)
        }
        guard let first = values.first?.scalarType else { return .list(.emptyUnknown) }
        guard let list = FieldList(first, values) else {
            problems.append("\(name): a list mixes value types; left out")
            return nil
        }
        return .list(list)
    }
}
