import FerryPlist
import Foundation

/// Writes binary plists from a ``PlistTable`` exactly as given.
///
/// Shared objects, cycles and odd reference and offset widths are kept, so tests can build the hostile inputs
/// readers must refuse. Test support, not part of Ferry's API.
public enum BinaryPlistWriter {
    /// Writes a table as `bplist00`.
    /// - Parameters:
    ///   - table: the objects; their order is kept, references are indexes into it.
    ///   - offsetSize: the bytes per offset (default: the smallest that fits).
    ///   - referenceSize: the bytes per object reference (default: the smallest that fits).
    public static func write(_ table: PlistTable, offsetSize: Int? = nil, referenceSize: Int? = nil) -> [UInt8] {
        let references = referenceSize ?? width(for: UInt64(max(1, table.objectCount - 1)))
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for node in table.nodes {
            offsets.append(bytes.count)
            append(node, to: &bytes, referenceSize: references)
        }
        let tableOffset = bytes.count
        let offsetWidth = offsetSize ?? width(for: UInt64(tableOffset))
        for offset in offsets { bytes += bigEndian(UInt64(offset), size: offsetWidth) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetWidth), UInt8(references)]
        bytes += bigEndian(UInt64(table.objectCount), size: 8)
        bytes += bigEndian(UInt64(table.topObject), size: 8)
        bytes += bigEndian(UInt64(tableOffset), size: 8)
        return bytes
    }

    /// Writes a value tree as `bplist00` (each value once; no sharing).
    public static func write(_ value: PlistValue) -> [UInt8] {
        var table = PlistTable()
        table.topObject = add(value, to: &table)
        return write(table)
    }

    /// Adds a value tree to a table and returns the index of its root.
    @discardableResult
    public static func add(_ value: PlistValue, to table: inout PlistTable) -> Int {
        switch value {
        case .null: return table.add(.null)
        case .bool(let flag): return table.add(.bool(flag))
        case .integer(let number): return table.add(.integer(number))
        case .unsigned(let number): return table.add(.unsigned(number))
        case .real(let number): return table.add(.real(number))
        case .date(let seconds): return table.add(.date(seconds))
        case .data(let bytes): return table.add(.data(bytes))
        case .string(let text): return table.add(.string(text))
        case .uid(let uid): return table.add(.uid(uid))
        case .array(let elements):
            let index = table.add(.null)
            table.set(index, .array(elements.map { add($0, to: &table) }))
            return index
        case .orderedSet(let elements):
            let index = table.add(.null)
            table.set(index, .orderedSet(elements.map { add($0, to: &table) }))
            return index
        case .set(let elements):
            let index = table.add(.null)
            table.set(index, .set(elements.map { add($0, to: &table) }))
            return index
        case .dictionary(let entries):
            let index = table.add(.null)
            let keys = entries.map { table.add(.string($0.key)) }
            let values = entries.map { add($0.value, to: &table) }
            table.set(index, .dictionary(keys: keys, values: values))
            return index
        }
    }

    private static func append(_ node: PlistTable.Node, to bytes: inout [UInt8], referenceSize: Int) {
        func header(_ marker: UInt8, _ count: Int) {
            if count < 15 {
                bytes.append(marker << 4 | UInt8(count))
            } else {
                bytes.append(marker << 4 | 0x0F)
                let size = width(for: UInt64(count))
                let exponent = size <= 1 ? 0 : size <= 2 ? 1 : size <= 4 ? 2 : 3
                bytes.append(0x10 | UInt8(exponent))
                bytes += bigEndian(UInt64(count), size: 1 << exponent)
            }
        }
        switch node {
        case .null: bytes.append(0x00)
        case .bool(let flag): bytes.append(flag ? 0x09 : 0x08)
        case .integer(let number):
            if number >= 0 && number <= 0xFF {
                bytes += [0x10, UInt8(number)]
            } else if number >= 0 && number <= 0xFFFF {
                bytes.append(0x11)
                bytes += bigEndian(UInt64(number), size: 2)
            } else if number >= 0 && number <= 0xFFFF_FFFF {
                bytes.append(0x12)
                bytes += bigEndian(UInt64(number), size: 4)
            } else {
                bytes.append(0x13)
                bytes += bigEndian(UInt64(bitPattern: number), size: 8)
            }
        case .unsigned(let number):
            bytes.append(0x14)
            bytes += bigEndian(0, size: 8) + bigEndian(number, size: 8)
        case .real(let number):
            bytes.append(0x23)
            bytes += bigEndian(number.bitPattern, size: 8)
        case .date(let seconds):
            bytes.append(0x33)
            bytes += bigEndian(seconds.bitPattern, size: 8)
        case .data(let data):
            header(0x4, data.count)
            bytes += data
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                header(0x5, text.utf8.count)
                bytes += Array(text.utf8)
            } else {
                let units = Array(text.utf16)
                header(0x6, units.count)
                for unit in units { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            }
        case .uid(let uid):
            let size = width(for: UInt64(uid))
            bytes.append(0x80 | UInt8(size - 1))
            bytes += bigEndian(UInt64(uid), size: size)
        case .array(let elements):
            header(0xA, elements.count)
            for element in elements { bytes += bigEndian(UInt64(element), size: referenceSize) }
        case .orderedSet(let elements):
            header(0xB, elements.count)
            for element in elements { bytes += bigEndian(UInt64(element), size: referenceSize) }
        case .set(let elements):
            header(0xC, elements.count)
            for element in elements { bytes += bigEndian(UInt64(element), size: referenceSize) }
        case .dictionary(let keys, let values):
            header(0xD, keys.count)
            for key in keys { bytes += bigEndian(UInt64(key), size: referenceSize) }
            for value in values { bytes += bigEndian(UInt64(value), size: referenceSize) }
        }
    }

    /// The fewest bytes (1, 2, 3, 4 or 8) that hold a value.
    static func width(for value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFF_FFFF { return 3 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (size - 1 - $0))) }
    }
}

/// Builds NSKeyedArchiver archives object by object, the way Foundation lays them out, for tests and samples.
///
/// ```swift
/// var archive = KeyedArchiveBuilder()
/// let name = archive.add(.string("Car.1"))
/// let id = archive.object("CKRecordID", fields: ["RecordName": .uid(name), "ZoneID": .uid(zone)])
/// let bytes = archive.binary(root: id)
/// ```
public struct KeyedArchiveBuilder {
    /// The `$objects` values, index 0 being `$null`.
    public private(set) var objects: [PlistValue] = [.string("$null")]
    private var classUIDs: [String: Int] = [:]

    /// An empty archive.
    public init() {}

    /// Adds a plain value (a string, number, data…) and returns its UID.
    @discardableResult
    public mutating func add(_ value: PlistValue) -> Int {
        objects.append(value)
        return objects.count - 1
    }

    /// Reserves a UID to fill later with ``set(_:_:)`` (for cycles).
    public mutating func reserve() -> Int { add(.null) }

    /// Replaces the value at a UID.
    public mutating func set(_ uid: Int, _ value: PlistValue) { objects[uid] = value }

    /// The UID of a class description (`$classname`, `$classes`), added once per class.
    public mutating func classUID(_ name: String, chain: [String]? = nil) -> Int {
        if let uid = classUIDs[name] { return uid }
        let classes = (chain ?? [name, "NSObject"]).map(PlistValue.string)
        let uid = add(.dictionary([.init(key: "$classes", value: .array(classes)), .init(key: "$classname", value: .string(name))]))
        classUIDs[name] = uid
        return uid
    }

    /// Adds an object of a class with fields (values are inline plist values or `.uid` references).
    @discardableResult
    public mutating func object(_ className: String, chain: [String]? = nil, fields: KeyValuePairs<String, PlistValue>, at uid: Int? = nil)
        -> Int
    {
        let classReference = classUID(className, chain: chain)
        var entries = fields.map { PlistValue.Entry(key: $0.key, value: $0.value) }
        entries.append(.init(key: "$class", value: .uid(classReference)))
        if let uid {
            set(uid, .dictionary(entries))
            return uid
        }
        return add(.dictionary(entries))
    }

    /// Adds an archived CKRecordID (with its CKRecordZoneID) and returns its UID.
    public mutating func recordID(_ recordName: String, zone: String, owner: String = "__defaultOwner__") -> Int {
        let zoneName = add(.string(zone))
        let ownerName = add(.string(owner))
        let zoneID = object("CKRecordZoneID", fields: ["ZoneName": .uid(zoneName), "ownerName": .uid(ownerName)])
        let name = add(.string(recordName))
        return object("CKRecordID", fields: ["RecordName": .uid(name), "ZoneID": .uid(zoneID)])
    }

    /// The archive's top-level plist, with `$top` holding the given keys.
    public func plist(top: KeyValuePairs<String, Int>) -> PlistValue {
        .dictionary([
            .init(key: "$version", value: .integer(100_000)),
            .init(key: "$archiver", value: .string("NSKeyedArchiver")),
            .init(key: "$top", value: .dictionary(top.map { .init(key: $0.key, value: .uid($0.value)) })),
            .init(key: "$objects", value: .array(objects)),
        ])
    }

    /// The archive as a binary plist with `$top.root` = `root`.
    public func binary(root: Int) -> [UInt8] { BinaryPlistWriter.write(plist(top: ["root": root])) }
}
