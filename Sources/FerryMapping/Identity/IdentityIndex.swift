import FerryCore
import FerryRecords
import Foundation

/// Every mapped object's record name and zone, by table and primary key, kept compactly so references can be
/// resolved while records stream (a million objects take tens of megabytes, not hundreds).
///
/// Rows are parallel arrays. Core Data numbers each table's rows from 1 up, so a table's row numbers are found by
/// primary key in a plain array (no hashing); keys too far apart for that go to a dictionary. A name made of a prefix
/// and an upper-case UUID (`Car.0E6F…`) is stored as the prefix's number and the UUID's 16 bytes; any other name as
/// text. Zones are numbered. A class: the mapper looks objects up several times per record, and reaching a struct
/// through a class property copied (retained) all of its arrays each time.
final class IdentityIndex {
    /// Per table: the row of each primary key (`-1`: none), for keys below ``denseLimit``.
    private var denseRows: [[Int32]] = []
    /// Rows of keys that did not fit `denseRows` when they were inserted.
    private var sparseRows: [UInt64: Int32] = [:]
    /// Per row: the prefix number (≥ 0) with `uuids[row]`, or `-(text index + 1)` for a name kept as text.
    private var nameRefs: [Int32] = []
    private var uuids: [UUID] = []
    private var zoneRefs: [Int32] = []
    private var texts: [String] = []
    private var prefixes = Numbering<String>()
    /// The prefix of the last name compacted.
    private var lastPrefix: Int32?
    private var zones = Numbering<ZoneID>()
    /// Names made lately, by row (direct-mapped): references to the same few targets (tags, a parent's children in a
    /// row) share one string instead of formatting it again.
    private var recentRows = [Int32](repeating: -1, count: IdentityIndex.recentSlots)
    private var recentNames = [String](repeating: "", count: IdentityIndex.recentSlots)
    private static let recentSlots = 4096
    private static let noUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Records an object's identity.
    func insert(table: Int, primaryKey: Int64, name: String, zone: ZoneID) {
        let zoneNumber = zones.number(of: zone)
        let (reference, uuid) = compact(name)
        if let row = row(table: table, primaryKey: primaryKey) {
            nameRefs[row] = reference
            uuids[row] = uuid
            zoneRefs[row] = zoneNumber
            recentRows[row & (Self.recentSlots - 1)] = -1
            return
        }
        let row = Int32(nameRefs.count)
        nameRefs.append(reference)
        uuids.append(uuid)
        zoneRefs.append(zoneNumber)
        while denseRows.count <= table { denseRows.append([]) }
        if primaryKey >= 0, primaryKey < denseLimit {
            let slot = Int(primaryKey)
            if denseRows[table].count <= slot {
                denseRows[table].append(contentsOf: repeatElement(-1, count: slot + 1 - denseRows[table].count))
            }
            denseRows[table][slot] = row
        } else {
            sparseRows[ObjectKey.make(table, primaryKey)] = row
        }
    }

    /// An object's identity, if it was recorded.
    ///
    /// `remembering` keeps the name among the recent ones, for references to the object: an object looking up its own
    /// name (once, as it is mapped) leaves the recent names as they were, which spares a retain and a release.
    func lookup(table: Int, primaryKey: Int64, remembering: Bool = true) -> (name: String, zone: ZoneID)? {
        guard let row = row(table: table, primaryKey: primaryKey) else { return nil }
        let slot = row & (Self.recentSlots - 1)
        if recentRows[slot] == Int32(row) { return (recentNames[slot], zones.values[Int(zoneRefs[row])]) }
        let reference = nameRefs[row]
        let name = reference >= 0 ? uuids[row].text(prefixedBy: prefixes.values[Int(reference)]) : texts[Int(-reference - 1)]
        guard remembering else { return (name, zones.values[Int(zoneRefs[row])]) }
        recentRows[slot] = Int32(row)
        recentNames[slot] = name
        return (name, zones.values[Int(zoneRefs[row])])
    }

    /// Keys below this go to the per-table arrays: dense keys always, and sparse ones while they cost at most a few
    /// bytes per object.
    private var denseLimit: Int64 { Int64(max(1 << 16, 4 * nameRefs.count)) }

    private func row(table: Int, primaryKey: Int64) -> Int? {
        if primaryKey >= 0, table < denseRows.count, primaryKey < denseRows[table].count {
            let row = denseRows[table][Int(primaryKey)]
            if row >= 0 { return Int(row) }
        }
        if sparseRows.isEmpty { return nil }
        return sparseRows[ObjectKey.make(table, primaryKey)].map(Int.init)
    }

    /// A name as (prefix number, UUID), or as text.
    ///
    /// Read in place: the first pass compacts every object's name.
    private func compact(_ name: String) -> (Int32, UUID) {
        let split = name.withUTF8Bytes { bytes -> (prefix: Int32?, text: String?, uuid: UUID)? in
            guard bytes.count >= 36, let uuid = UUID(utf8: UnsafeBufferPointer(rebasing: bytes[(bytes.count - 36)...])) else { return nil }
            let head = UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - 36)])
            // Objects of one entity come together and share a prefix: compare with the last one before hashing.
            if let last = lastPrefix, prefixes.values[Int(last)].utf8.elementsEqual(head) { return (last, nil, uuid) }
            // The UUID is ASCII, so the split falls between characters and the head is valid UTF-8.
            return (nil, String(decoding: head, as: UTF8.self), uuid)
        }
        guard let split else {
            texts.append(name)
            return (-Int32(texts.count), Self.noUUID)
        }
        if let number = split.prefix { return (number, split.uuid) }
        let number = prefixes.number(of: split.text ?? "")
        lastPrefix = number
        return (number, split.uuid)
    }
}

/// Distinct values numbered in the order they were first seen.
private struct Numbering<Value: Hashable> {
    private(set) var values: [Value] = []
    private var numbers: [Value: Int32] = [:]

    /// The number of `value`, numbering it if it is new.
    mutating func number(of value: Value) -> Int32 {
        if let known = numbers[value] { return known }
        let number = Int32(values.count)
        values.append(value)
        numbers[value] = number
        return number
    }
}
