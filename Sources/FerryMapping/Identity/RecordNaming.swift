import Crypto
import FerryCore
import Foundation

/// Names Ferry makes for records that bring none: deterministic, so running a migration again gives the same names.
public enum RecordNaming {
    /// Ferry's UUIDv5 namespace for object identities (a random UUID fixed once).
    public static let namespace: [UInt8] = [
        0x6F, 0x3A, 0x9C, 0x2E, 0x51, 0xB4, 0x4D, 0x8A, 0x9E, 0x07, 0x1C, 0x5D, 0x33, 0xA2, 0xF1, 0x84,
    ]

    /// An RFC 4122 version 5 UUID (SHA-1 of namespace + name).
    public static func uuidV5(_ name: String, namespace: [UInt8] = RecordNaming.namespace) -> UUID {
        var hasher = Insecure.SHA1()
        hasher.update(data: namespace)
        hasher.update(data: Array(name.utf8))
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
                bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// The deterministic name of an object: `<recordType><separator><UUIDv5(storeUUID/entity/pk)>`.
    public static func deterministicName(recordType: String, separator: String, storeUUID: String, entity: String, primaryKey: Int64) -> String {
        "\(recordType)\(separator)\(uuidV5("\(storeUUID)/\(entity)/\(primaryKey)").text)"
    }
}
