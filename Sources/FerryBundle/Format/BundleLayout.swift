import FerryCore
import FerryRecords

/// Where things live inside a bundle (format version 1), relative to the bag's base directory.
///
/// ```
/// <base>/bagit.txt                 BagIt declaration
/// <base>/bag-info.txt              Payload-Oxum, Ferry-Bundle-Version, …
/// <base>/manifest-sha256.txt       SHA-256 of every payload file
/// <base>/tagmanifest-sha256.txt    SHA-256 of the tag files
/// <base>/data/manifest.json        source, counts, record-type order, file list
/// <base>/data/schema.json          record types → fields → types; zones
/// <base>/data/records/<zone>/<Type>.ndjson
/// <base>/data/deletions/<zone>.ndjson
/// <base>/data/assets/sha256/<2 hex>/<64 hex>
/// ```
public enum BundleLayout {
    /// The bundle format version this Ferry writes and reads.
    public static let formatVersion = 1
    /// The `format` value in `manifest.json`.
    public static let formatName = "ferry-bundle"

    static let bagitFile = "bagit.txt"
    static let bagInfoFile = "bag-info.txt"
    static let payloadManifestFile = "manifest-sha256.txt"
    static let tagManifestFile = "tagmanifest-sha256.txt"
    static let manifestFile = "data/manifest.json"
    static let schemaFile = "data/schema.json"

    /// The tag files, in the order they are written.
    static let tagFiles = [bagitFile, bagInfoFile, payloadManifestFile, tagManifestFile]

    /// The path of the records of one type in one zone.
    static func recordsPath(type: String, zone: ZoneID, escapeMark: UInt8 = escapeMark) -> String {
        "data/records/\(directoryName(for: zone, escapeMark: escapeMark))/\(escape(type, mark: escapeMark)).ndjson"
    }

    /// The path of the deletions in one zone.
    static func deletionsPath(zone: ZoneID, escapeMark: UInt8 = escapeMark) -> String {
        "data/deletions/\(directoryName(for: zone, escapeMark: escapeMark)).ndjson"
    }

    /// What starts an escaped byte in a path (`+`).
    ///
    /// No record type, zone or owner name keeps a `+` as itself, and BagIt's manifests write it as it is. Bundles
    /// written before used `%`, which manifests must write as `%25`; the reference validator (bagit-python) does not
    /// read that back, so those bundles failed it. They are still read.
    static let escapeMark = UInt8(ascii: "+")
    /// The escape of earlier bundles, accepted when reading.
    static let legacyEscapeMark = UInt8(ascii: "%")

    /// The path of an asset.
    static func assetPath(_ digest: SHA256Digest) -> String {
        let hex = digest.hex
        return "data/assets/sha256/\(hex.prefix(2))/\(hex)"
    }

    /// The length of every asset's path: `data/assets/sha256/`, 2 hex digits and a slash, 64 hex digits.
    private static let assetPathLength = 19 + 3 + 64

    /// The digest an asset path names, if it is one.
    static func assetDigest(inPath path: String) -> SHA256Digest? {
        // Most paths a scan asks about are not assets: turn them away before splitting.
        guard path.utf8.count == assetPathLength, path.hasPrefix("data/assets/sha256/") else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "data", parts[1] == "assets", parts[2] == "sha256",
            let digest = SHA256Digest(hex: String(parts[4])), digest.hex == parts[4], parts[3] == parts[4].prefix(2)
        else { return nil }
        return digest
    }

    /// One path component for a zone: its escaped name, plus `@owner` when the owner is not the current user.
    static func directoryName(for zone: ZoneID, escapeMark: UInt8 = escapeMark) -> String {
        let name = escape(zone.zoneName, mark: escapeMark)
        return zone.hasDefaultOwner ? name : "\(name)@\(escape(zone.ownerName, mark: escapeMark))"
    }

    /// Escapes a name into one safe path component: bytes outside `[A-Za-z0-9_.-]` and a leading `.` become `+XX`
    /// (`mark` and two uppercase hex digits).
    static func escape(_ name: String, mark: UInt8 = escapeMark) -> String {
        var result = ""
        for (index, byte) in name.utf8.enumerated() {
            let safe =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2D || (byte == 0x2E && index > 0)
            if safe {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result.unicodeScalars.append(Unicode.Scalar(mark))
                result += (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }
}
