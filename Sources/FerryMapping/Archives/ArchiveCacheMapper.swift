import FerryCore
import FerryPlist
import FerryRecords
import Foundation

/// Turns a plist or NSKeyedArchiver cache — a collection of objects, such as the `LocalEntity` cache of seeds §4 or
/// an array of dictionaries — into record changes, without the app's classes.
///
/// The collection is the archive's root (or a plain plist's top): an array, set or ordered set of objects, a
/// dictionary of them, or a dictionary of such collections. Each object becomes a record: its class (or
/// `Item` for dictionaries, or ``Options/recordType`` for all) is the record type, its properties the fields. Its name comes from a
/// `recordID` property (an archived CKRecordID, whose zone is kept too), a `recordName`, a `tempID` (`<UUID>-Temp`,
/// given the `<Type><separator>` prefix), else is deterministic from the file's digest and the object's position.
/// `cloudStatus` is sync state (0 add, 1 up to date, 2 delete, 3 update): 2 becomes a deletion, and with
/// ``Options/pendingOnly`` up-to-date objects are left out.
public final class ArchiveCacheMapper {
    /// Choices.
    public struct Options: Sendable {
        /// The record type of every object (default: its class, `Item` for dictionaries).
        public var recordType: String?
        /// Between the record type and the identifier in names Ferry makes.
        public var separator = "."
        /// The zone of records whose identity names none (default: the default zone).
        public var zone: String?
        /// Only changes still to be synced (status 0, 2, 3).
        public var pendingOnly = false
        /// The property holding the sync status (0 add, 1 up to date, 2 delete, 3 update); not written as a field.
        public var statusProperty = "cloudStatus"
        /// The property to take record names from, before the usual ones.
        public var nameProperty: String?
        /// Binary values larger than this become assets.
        public var assetThreshold = 256 * 1024

        /// The defaults.
        public init() {}
    }

    let path: String
    let bytes: [UInt8]
    let options: Options
    let assets: StoreAssets
    /// The file's SHA-256, the namespace of deterministic names.
    public let digest: SHA256Digest

    /// Reads a cache file (never modified).
    public convenience init(path: String, options: Options = Options(), assets: StoreAssets) throws {
        self.init(bytes: try InputFile.contents(of: path, limit: 1 << 30), name: path, options: options, assets: assets)
    }

    /// Maps a cache already in memory; `name` is what errors call it.
    public init(bytes: [UInt8], name: String, options: Options = Options(), assets: StoreAssets) {
        path = name
        self.bytes = bytes
        self.options = options
        self.assets = assets
        digest = SHA256Hasher.digest(bytes)
    }

    /// What became of one object of the cache.
    public struct Mapped: Sendable {
        /// The record or deletion.
        public var change: RecordChange
        /// Where it came from: its record type and position in the collection (`LocalEntity #3`).
        public var origin: String
        /// What could not be carried over (the record is still written).
        public var problems: [String]
    }

    /// The identity properties, which are not written as fields (besides the status property).
    static let identityProperties: Set<String> = ["recordID", "recordName", "tempID"]

    /// Maps every object, in the collection's order.
    /// - Throws: ``MappingError/Code/unknownField`` when only pending changes are wanted and no object has the status
    ///   property (every object would be kept, silently), naming the properties the objects have.
    public func run(_ body: (Mapped) throws -> Void) throws {
        let items = try collection()
        if options.pendingOnly, !items.contains(where: { item in item.properties.contains { $0.name == options.statusProperty } }) {
            var names: [String] = []
            var seen: Set<String> = []
            for item in items {
                for property in item.properties where seen.insert(property.name).inserted { names.append(property.name) }
                if names.count >= 40 { break }
            }
            throw MappingError(
                .unknownField,
                "\(path): --pending-only reads the status property \(options.statusProperty), which no object of the cache has; "
                    + "give the one it has with --status-field (the objects have: \(names.sorted().joined(separator: ", ")))")
        }
        for (position, item) in items.enumerated() {
            if let mapped = try map(item, position: position) { try body(mapped) }
        }
    }

    /// One object of the collection: its class name (nil for a dictionary) and its properties.
    struct Item {
        var className: String?
        var properties: [(name: String, value: ArchivedValue)]
    }

    /// The objects of the file's collection.
    func collection() throws -> [Item] {
        let document: PlistDocument
        do {
            document = try PlistDocument(bytes: bytes)
        } catch {
            throw MappingError(.invalidPlan, "\(path): not a property list or keyed archive: \(error)", cause: error)
        }
        let root: ArchivedValue
        do {
            if let top = try document.decodeArchive() {
                guard let first = top.first(where: { $0.key == "root" }) ?? top.first else {
                    throw MappingError(.invalidPlan, "\(path): the keyed archive has no $top object")
                }
                root = first.value
            } else {
                root = Self.archived(try document.value())
            }
        } catch let error as MappingError {
            throw error
        } catch {
            throw MappingError(.invalidPlan, "\(path): the archive does not decode: \(error)", cause: error)
        }
        var items: [Item] = []
        Self.collect(root, into: &items, depth: 0)
        guard !items.isEmpty else {
            throw MappingError(
                .invalidPlan, "\(path): no collection of objects found (expected an array, set or dictionary of objects at the root)")
        }
        return items
    }

    private static func collect(_ value: ArchivedValue, into items: inout [Item], depth: Int) {
        guard depth < 3 else { return }
        switch value {
        case .array(let elements):
            for element in elements { if let item = item(element) { items.append(item) } else { collect(element, into: &items, depth: depth + 1) } }
        case .object(let object):
            switch object.content {
            case .array(let elements), .set(let elements), .orderedSet(let elements): collect(.array(elements), into: &items, depth: depth)
            case .dictionary(let entries): collect(.dictionary(entries), into: &items, depth: depth)
            default: if let item = item(value) { items.append(item) }
            }
        case .dictionary(let entries):
            if depth > 0, let item = item(value) {
                items.append(item)
                return
            }
            let values = entries.map(\.value)
            let objects = values.compactMap(item)
            if objects.count == values.count {
                items += objects
            } else {
                for element in values { collect(element, into: &items, depth: depth + 1) }
            }
        default: return
        }
    }

    /// An object with properties: an archived custom class, or a dictionary with string keys.
    private static func item(_ value: ArchivedValue) -> Item? {
        switch value {
        case .object(let object):
            switch object.content {
            case .fields(let fields): return Item(className: object.archivedClass.unqualifiedName, properties: fields.map { ($0.name, $0.value) })
            case .dictionary(let entries): return dictionaryItem(entries)
            default: return nil
            }
        case .dictionary(let entries): return dictionaryItem(entries)
        default: return nil
        }
    }

    private static func dictionaryItem(_ entries: [ArchivedEntry]) -> Item? {
        var properties: [(String, ArchivedValue)] = []
        for entry in entries {
            guard let key = stringValue(entry.key) else { return nil }
            properties.append((key, entry.value))
        }
        return properties.isEmpty ? nil : Item(className: nil, properties: properties)
    }

    static func stringValue(_ value: ArchivedValue) -> String? {
        switch value {
        case .string(let text): return text
        case .object(let object): if case .string(let text) = object.content { return text }
        default: break
        }
        return nil
    }

    /// A plain plist value in the archive's value model.
    static func archived(_ value: PlistValue) -> ArchivedValue {
        switch value {
        case .null, .uid: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .unsigned(let number): .unsigned(number)
        case .real(let number): .real(number)
        case .date(let seconds): .date(seconds)
        case .data(let bytes): .data(bytes)
        case .string(let text): .string(text)
        case .array(let elements), .set(let elements), .orderedSet(let elements): .array(elements.map(archived))
        case .dictionary(let entries): .dictionary(entries.map { ArchivedEntry(key: .string($0.key), value: archived($0.value)) })
        }
    }
}
