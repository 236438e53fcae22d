import FerryCore
import FerryRecords
import Foundation

/// Every mapped object's record name and zone, by table and primary key, kept compactly so references can be
/// resolved while records stream (a million objects take tens of megabytes, not hundreds).
///
/// The map from (table, primary key) holds only a row number; rows are parallel arrays. A name made of a prefix and
/// an upper-case UUID (`Car.0E6F…`) is stored as the prefix's number and the UUID's 16 bytes; any other name as
/// text. Zones are numbered. A class: the mapper looks objects up several times per record, and reaching a struct
/// through a class property copied (retained) all of its arrays each time.
final class IdentityIndex {
    private var rows: [UInt64: Int32] = [:]
    /// Per row: the prefix number (≥ 0) with `uuids[row]`, or `-(text index + 1)` for a name kept as text.
    private var nameRefs: [Int32] = []
    private var uuids: [UUID] = []
    private var zoneRefs: [Int32] = []
    private var texts: [String] = []
    private var prefixes: [String] = []
    private var prefixNumbers: [String: Int32] = [:]
    private var zones: [ZoneID] = []
    private var zoneNumbers: [ZoneID: Int32] = [:]
    private static let noUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Records an object's identity.
    func insert(table: Int, primaryKey: Int64, name: String, zone: ZoneID) {
        let zoneNumber: Int32
        if let known = zoneNumbers[zone] {
            zoneNumber = known
        } else {
            zoneNumber = Int32(zones.count)
            zones.append(zone)
            zoneNumbers[zone] = zoneNumber
        }
        let (reference, uuid) = compact(name)
        let key = ObjectKey.make(table, primaryKey)
        if let row = rows[key] {
            nameRefs[Int(row)] = reference
            uuids[Int(row)] = uuid
            zoneRefs[Int(row)] = zoneNumber
            return
        }
        rows[key] = Int32(nameRefs.count)
        nameRefs.append(reference)
        uuids.append(uuid)
        zoneRefs.append(zoneNumber)
    }

    /// An object's identity, if it was recorded.
    func lookup(table: Int, primaryKey: Int64) -> (name: String, zone: ZoneID)? {
        guard let row = rows[ObjectKey.make(table, primaryKey)].map(Int.init) else { return nil }
        let reference = nameRefs[row]
        let name = reference >= 0 ? prefixes[Int(reference)] + uuids[row].text : texts[Int(-reference - 1)]
        return (name, zones[Int(zoneRefs[row])])
    }

    private func compact(_ name: String) -> (Int32, UUID) {
        let utf8 = name.utf8
        if utf8.count >= 36 {
            let split = utf8.index(utf8.endIndex, offsetBy: -36)
            if let uuidText = String(utf8[split...]), let uuid = UUID(text: uuidText),
                let prefix = String(utf8[..<split])
            {
                if let number = prefixNumbers[prefix] { return (number, uuid) }
                let number = Int32(prefixes.count)
                prefixes.append(prefix)
                prefixNumbers[prefix] = number
                return (number, uuid)
            }
        }
        texts.append(name)
        return (-Int32(texts.count), Self.noUUID)
    }
}
