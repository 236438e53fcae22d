import FerryRecords
import Foundation

/// Every mapped object's record name and zone, by table and primary key, kept compactly so references can be
/// resolved while records stream (a million objects take tens of megabytes, not hundreds).
///
/// A name made of a prefix and an upper-case UUID (`Car.0E6F…`) is stored as the prefix's number and the UUID's 16
/// bytes; any other name as text. Zones are numbered.
struct IdentityIndex {
    private enum Name {
        case prefixed(prefix: Int32, uuid: UUID)
        case text(String)
    }

    private struct Entry {
        var name: Name
        var zone: Int32
    }

    private var entries: [UInt64: Entry] = [:]
    private var prefixes: [String] = []
    private var prefixNumbers: [String: Int32] = [:]
    private var zones: [ZoneID] = []
    private var zoneNumbers: [ZoneID: Int32] = [:]

    /// The number of objects recorded.
    var count: Int { entries.count }

    private static func key(table: Int, primaryKey: Int64) -> UInt64 {
        UInt64(truncatingIfNeeded: table) << 48 ^ UInt64(bitPattern: primaryKey)
    }

    /// Records an object's identity.
    mutating func insert(table: Int, primaryKey: Int64, name: String, zone: ZoneID) {
        let zoneNumber: Int32
        if let known = zoneNumbers[zone] {
            zoneNumber = known
        } else {
            zoneNumber = Int32(zones.count)
            zones.append(zone)
            zoneNumbers[zone] = zoneNumber
        }
        entries[Self.key(table: table, primaryKey: primaryKey)] = Entry(name: compact(name), zone: zoneNumber)
    }

    /// An object's identity, if it was recorded.
    func lookup(table: Int, primaryKey: Int64) -> (name: String, zone: ZoneID)? {
        guard let entry = entries[Self.key(table: table, primaryKey: primaryKey)] else { return nil }
        let name: String
        switch entry.name {
        case .prefixed(let prefix, let uuid): name = prefixes[Int(prefix)] + uuid.uuidString
        case .text(let text): name = text
        }
        return (name, zones[Int(entry.zone)])
    }

    private mutating func compact(_ name: String) -> Name {
        let utf8 = name.utf8
        guard utf8.count >= 36 else { return .text(name) }
        let split = utf8.index(utf8.endIndex, offsetBy: -36)
        guard let uuidText = String(utf8[split...]), let uuid = UUID(uuidString: uuidText), uuid.uuidString == uuidText,
            let prefix = String(utf8[..<split])
        else { return .text(name) }
        if let number = prefixNumbers[prefix] { return .prefixed(prefix: number, uuid: uuid) }
        let number = Int32(prefixes.count)
        prefixes.append(prefix)
        prefixNumbers[prefix] = number
        return .prefixed(prefix: number, uuid: uuid)
    }
}
