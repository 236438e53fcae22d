import FerryCore
import FerryCoreData
import FerryLocalStore
import FerryMapping
import FerryRecords
import Foundation

/// A Core Data store's objects, mapped to records by a plan.
public final class CoreDataChangeSource: ChangeSource {
    public let store: CoreDataStore
    public let plan: MappingPlan
    let mapper: StoreRecordMapper
    let storeAssets: StoreAssets
    let path: String

    /// Opens the mapping of a store (the store is already open, never modified).
    public init(store: CoreDataStore, path: String, plan: MappingPlan, temporaryDirectory: String? = nil) throws {
        self.store = store
        self.path = path
        self.plan = plan
        storeAssets = try StoreAssets(temporaryDirectory: temporaryDirectory)
        mapper = try StoreRecordMapper(store: store, plan: plan, assets: storeAssets)
    }

    public var kind: String { "core-data" }
    /// `Store.sqlite (type-prefixed)`: also what bundles copied from it record as their source (see
    /// ``preset(inDescription:)``).
    public var description: String { URL(fileURLWithPath: path).lastPathComponent + " (\(plan.preset ?? "mapping"))" }

    /// The preset named in a ``description`` (as a bundle's manifest keeps it), `a mapping plan` for a plan file.
    static func preset(inDescription text: String) -> String? {
        guard text.hasSuffix(")"), let open = text.lastIndex(of: "(") else { return nil }
        let name = text[text.index(after: open)..<text.index(before: text.endIndex)]
        return name == "mapping" ? "a mapping plan" : String(name)
    }
    public var assets: (any AssetProvider)? { storeAssets }
    public var mappingPreset: String? { Self.preset(inDescription: description) }

    /// The store's objects (each becomes a record or a deletion; skipped entities and link records make it close,
    /// not exact).
    public var expectedChanges: Int? {
        try? store.schema.entities.reduce(0) { total, entity in total + (try store.count(of: entity)) }
    }

    /// Called on the reading thread with the objects the mapping's first pass (names and zones) has read, and their
    /// total: the pass before the first record comes.
    public func onFirstPass(_ body: @escaping @Sendable (_ done: Int, _ total: Int) -> Void) {
        mapper.onIdentified = body
    }

    public var fingerprint: String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? Int64) ?? (attributes?[.size] as? Int).map(Int64.init) ?? -1
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
        return "core-data|\(store.metadata.uuid)|\(size)|\(modified)|\(wal)|\(plan.yaml())"
    }

    /// Found once every change has been handed out: what the mapping decided that the plan did not say (once per
    /// entity), then the store's objects that no entity of the mapping reads (one warning per object for the first
    /// ``maxListed``, then a count per table).
    public private(set) var findings: [String] = []

    /// How many objects not carried are named one by one.
    public static let maxListed = 10_000

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        try mapper.run { mapped in
            var mapped = mapped
            try body(SourceChange(mapped.takeChange(), origin: mapped.entity, separator: " p", number: mapped.primaryKey, problems: mapped.problems))
        }
        var found = mapper.notices
        var listed = 0
        var more: [String: Int] = [:]
        try store.forEachUncarriedObject { object in
            guard listed < Self.maxListed else { return more[object.table, default: 0] += 1 }
            listed += 1
            found.append(object.warning)
        }
        for (table, count) in more.sorted(by: { $0.key < $1.key }) {
            found.append("not carried: \(count) more objects of \(table) (run ferry dump --json to list them)")
        }
        findings = found
    }
}
