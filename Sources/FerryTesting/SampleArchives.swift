import FerryCore
import FerryPlist
import Foundation

/// The keyed-archive cache in `Samples/local-data-service` (`../shared/docs/seeds.md` §4), written by
/// ``KeyedArchiveBuilder`` the way NSKeyedArchiver writes an array of `LocalEntity` objects.
public enum SampleArchives {
    /// Where the sample lives under `Samples/`.
    public static let relativePath = "local-data-service/LocalEntities.archive"

    /// The archive: five `LocalEntity` objects (subclasses of `LocalPersistentObject`), one per sync state.
    ///
    /// | name | cloudStatus | identity |
    /// |---|---|---|
    /// | Beetle | 1 up to date | recordID `Entity.…0001` in `LocalZone` |
    /// | Mini | 0 to add | tempID `…-Temp` |
    /// | 2CV | 2 to delete | recordID `Entity.…0003` |
    /// | Unimog | 3 to update | recordID `Entity.…0004` |
    /// | Routemaster | 1 up to date | recordID `Entity.…0005` |
    public static func localDataService() -> [UInt8] {
        var archive = KeyedArchiveBuilder()
        let chain = ["LocalEntity", "LocalPersistentObject", "NSObject"]
        let entities: [(name: String, text: String, status: Int64, id: Int?, created: Double)] = [
            ("Beetle", "Yellow, 1972 — ünïcødé ✓", 1, 1, 500_000_000), ("Mini", "Red; not yet uploaded", 0, nil, 500_086_400),
            ("2CV", "Sold; delete it", 2, 3, 500_172_800), ("Unimog", "New winch", 3, 4, 500_259_200),
            ("Routemaster", "Heritage fleet", 1, 5, 500_345_600),
        ]
        var members: [PlistValue] = []
        for entity in entities {
            let name = archive.add(.string(entity.name))
            let text = archive.add(.string(entity.text))
            let created = archive.object("NSDate", fields: ["NS.time": .real(entity.created)])
            let updated = archive.object("NSDate", fields: ["NS.time": .real(entity.created + 3600)])
            var fields: [(String, PlistValue)] = [
                ("name", .uid(name)), ("desctext", .uid(text)), ("cloudStatus", .integer(entity.status)), ("dateCreated", .uid(created)),
                ("dateUpdated", .uid(updated)),
            ]
            if let id = entity.id {
                fields.append(
                    ("recordID", .uid(archive.recordID("Entity.0E6F2A40-0000-4000-8000-\(String(format: "%012d", id))", zone: "LocalZone"))))
            } else {
                fields.append(("tempID", .uid(archive.add(.string("6C1A0E22-5B3D-4F7E-9A10-2B3C4D5E6F70-Temp")))))
            }
            members.append(.uid(archive.object(fields: fields, className: "LocalEntity", chain: chain)))
        }
        let array = archive.object("NSArray", fields: ["NS.objects": .array(members)])
        return archive.binary(root: array)
    }

    /// Writes the sample under a `Samples/` folder.
    public static func write(to samples: String) throws {
        let path = "\(samples)/\(relativePath)"
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data(localDataService()).write(to: URL(fileURLWithPath: path))
    }
}

extension KeyedArchiveBuilder {
    /// Adds an object whose fields come in a runtime-built order.
    @discardableResult
    public mutating func object(fields: [(String, PlistValue)], className: String, chain: [String]? = nil) -> Int {
        let classReference = classUID(className, chain: chain)
        var entries = fields.map { PlistValue.Entry(key: $0.0, value: $0.1) }
        entries.append(.init(key: "$class", value: .uid(classReference)))
        return add(.dictionary(entries))
    }
}
