import FerryBackend
import FerryLocalStore
import FerryRecords

/// A source narrowed to some record types and zones, or to what an incremental export needs.
///
/// Changes of the record types and zones asked for (`--type`, `--zone`); records changed since a time (by a TIMESTAMP
/// field such as `lastUpdate`), and records whose sync-status field says they are pending (seeds §4: 0 add, 1 up to
/// date, 2 delete, 3 update). Deletions pass the time and status filters.
public final class FilteredChangeSource: ChangeSource {
    /// What to keep.
    public struct Filter: Sendable, Hashable {
        /// Keep records whose `sinceField` is at or after this time (milliseconds since 1970).
        public var since: Int64?
        /// The TIMESTAMP field `since` compares (records without it are kept: nothing says they are old).
        public var sinceField = "lastUpdate"
        /// Keep only pending records: the status field 0 or 3 → the record, 2 → a deletion, 1 → left out.
        public var pendingOnly = false
        /// The INT64 status field; it is not written.
        public var statusField = "cloudStatus"

        /// Keep only changes of these record types (`nil`: every type).
        public var recordTypes: Set<String>?
        /// Keep only changes in these zones, by name or `name@owner` (`nil`: every zone).
        public var zoneNames: Set<String>?

        /// Keeps everything.
        public init() {}

        /// Whether anything is filtered.
        public var isActive: Bool { since != nil || pendingOnly || recordTypes != nil || zoneNames != nil }

        /// Whether a change's type and zone are among those asked for.
        func selects(_ change: RecordChange) -> Bool {
            if let recordTypes, !recordTypes.contains(change.recordType) { return false }
            if let zoneNames {
                let zone = change.zoneID
                return zoneNames.contains(zone.description) || (zone.hasDefaultOwner && zoneNames.contains(zone.zoneName))
            }
            return true
        }
    }

    let base: any ChangeSource
    let filter: Filter
    /// What the records held of the fields the filter reads, for ``findings``.
    private var recordsRead = 0
    private var sinceField = FieldCensus(expected: .timestamp)
    private var statusField = FieldCensus(expected: .int64)
    /// The first field names seen, to name them when the filter's fields are missing.
    private var fieldNames: Set<String> = []
    /// The record types and zones seen (the first 10 000 of each), to say which asked-for ones no change had.
    private var typesSeen: Set<String> = []
    private var zonesSeen: Set<String> = []

    /// Filters `base`.
    public init(_ base: any ChangeSource, filter: Filter) {
        self.base = base
        self.filter = filter
    }

    public var kind: String { base.kind }
    public var description: String { base.description }
    public var assets: (any AssetProvider)? { base.assets }
    public var mappingPreset: String? { base.mappingPreset }
    public var feedPosition: FeedPosition? { base.feedPosition }
    public var fingerprint: String {
        "\(base.fingerprint)|since=\(filter.since.map(String.init) ?? "")|\(filter.sinceField)|pending=\(filter.pendingOnly)"
            + "|types=\(filter.recordTypes?.sorted().joined(separator: ",") ?? "*")|zones=\(filter.zoneNames?.sorted().joined(separator: ",") ?? "*")"
    }
    public func canSupply(_ asset: Asset) throws -> Bool { try base.canSupply(asset) }
    public func prepare(for store: LocalStore) throws -> (assets: Int, bytes: Int64) { try base.prepare(for: store) }
    public func prepare(for target: any RecordStore) throws -> (assets: Int, bytes: Int64) { try base.prepare(for: target) }
    public func stageAssets(temporaryDirectory: String?) throws -> (assets: Int, bytes: Int64) {
        try base.stageAssets(temporaryDirectory: temporaryDirectory)
    }

    /// Warnings when a filter could not do what it was asked: no record has the field it reads (so it kept every
    /// record), or the field holds another type; with the fields the records do have.
    public var findings: [String] {
        var found = base.findings
        if let types = filter.recordTypes {
            let absent = types.subtracting(typesSeen).sorted()
            if !absent.isEmpty, typesSeen.count < 10_000 {
                found.append(
                    "--type \(absent.joined(separator: ", ")): no change of the source has this record type, so none was copied; "
                        + "its types: \(typesSeen.sorted().prefix(40).joined(separator: ", "))")
            }
        }
        if let zones = filter.zoneNames {
            let seen = zonesSeen
            let absent = zones.filter { !seen.contains($0) }.sorted()
            if !absent.isEmpty, zonesSeen.count < 10_000 {
                found.append(
                    "--zone \(absent.joined(separator: ", ")): no change of the source is in this zone, so none was copied; "
                        + "its zones: \(zonesSeen.sorted().prefix(40).joined(separator: ", "))")
            }
        }
        guard recordsRead > 0 else { return found }
        let names = fieldNames.sorted().prefix(40).joined(separator: ", ")
        if filter.since != nil,
            let finding = sinceField.finding(
                field: filter.sinceField, option: "--since-field", flag: "--since", records: recordsRead, fieldNames: names,
                effect: "every record was kept")
        {
            found.append(finding)
        }
        if filter.pendingOnly,
            let finding = statusField.finding(
                field: filter.statusField, option: "--status-field", flag: "--pending-only", records: recordsRead, fieldNames: names,
                effect: "every record was kept as pending")
        {
            found.append(finding)
        }
        return found
    }

    public func forEachChange(_ body: (consuming SourceChange) throws -> Void) throws {
        let selecting = filter.recordTypes != nil || filter.zoneNames != nil
        try base.forEachChange { item in
            if selecting {
                if typesSeen.count < 10_000 { typesSeen.insert(item.change.recordType) }
                if zonesSeen.count < 10_000 {
                    let zone = item.change.zoneID
                    zonesSeen.insert(zone.description)
                }
                guard filter.selects(item.change) else { return }
            }
            guard case .record(var record) = item.change else { return try body(item) }
            recordsRead += 1
            // The fields of the first records only, to name them if the filter's field turns out to be missing.
            if recordsRead <= 1000 { for name in record.fields.names where fieldNames.count < 256 { fieldNames.insert(name) } }
            if filter.since != nil { sinceField.count(record.fields[filter.sinceField]) }
            if filter.pendingOnly { statusField.count(record.fields[filter.statusField]) }
            if filter.pendingOnly, case .int64(let status)? = record.fields[filter.statusField] {
                record.fields[filter.statusField] = nil
                switch status {
                case 1: return
                case 2:
                    let deletion = Deletion(recordType: record.recordType, recordName: record.recordName, zoneID: record.zoneID)
                    return try body(SourceChange(.deletion(deletion), origin: item.origin, problems: item.problems))
                default: break
                }
            }
            if let since = filter.since, case .timestamp(let time)? = record.fields[filter.sinceField], time < since { return }
            var kept = item
            kept.change = .record(record)
            try body(kept)
        }
    }
}

/// How the records held one field a filter reads: of the expected type, of others (rare: counted by name), or not.
private struct FieldCensus {
    let expected: ScalarType
    private var matching = 0
    private var others: [String: Int] = [:]

    init(expected: ScalarType) { self.expected = expected }

    mutating func count(_ value: FieldValue?) {
        guard let value else { return }
        if value.type == .scalar(expected) { matching += 1 } else { others[value.type.description, default: 0] += 1 }
    }

    /// The warning when the filter could not do what it was asked, if it could not.
    func finding(field: String, option: String, flag: String, records: Int, fieldNames: String, effect: String) -> String? {
        if matching == 0, others.isEmpty {
            return "\(flag): no record has the field \(field) (\(option)), so \(effect); the records' fields: "
                + (fieldNames.isEmpty ? "none" : fieldNames)
        }
        if matching == 0 {
            return
                "\(flag): the field \(field) (\(option)) holds \(others.keys.sorted().joined(separator: ", ")), not \(expected.rawValue), so \(effect)"
        }
        if matching < records {
            return "\(flag): \(records - matching) of \(records) records have no \(expected.rawValue) field \(field); they were kept"
        }
        return nil
    }
}
