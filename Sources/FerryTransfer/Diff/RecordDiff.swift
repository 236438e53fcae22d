import FerryCore
import FerryRecords

/// Compares two sources record by record, by content digest (system fields such as change tags left out): the
/// check to run after a migration.
public enum RecordDiff {
    /// One difference.
    public enum Difference: Sendable, Hashable {
        /// A record only the first source has.
        case onlyInFirst(RecordID, recordType: String)
        /// A record only the second source has.
        case onlyInSecond(RecordID, recordType: String)
        /// Both have the record, with different contents.
        case differs(RecordID, recordType: String)
        /// A record's asset whose bytes a source cannot provide.
        case missingAsset(RecordID, field: String, SHA256Digest, inFirst: Bool)
    }

    /// The counts of a comparison.
    public struct Summary: Sendable, Hashable {
        public var first = 0
        public var second = 0
        public var identical = 0
        public var differing = 0
        public var onlyInFirst = 0
        public var onlyInSecond = 0
        public var missingAssets = 0

        /// Whether the sources hold the same records with the same contents and every asset.
        public var isIdentical: Bool { differing == 0 && onlyInFirst == 0 && onlyInSecond == 0 && missingAssets == 0 }
    }

    /// Compares the live records of two sources (deletions mean "absent"); `report` gets each difference.
    public static func compare(_ first: any ChangeSource, _ second: any ChangeSource, report: (Difference) throws -> Void) throws -> Summary {
        var summary = Summary()
        var index: [RecordKey: (id: RecordID, type: String, digest: SHA256Digest)] = [:]
        try first.forEachChange { change in
            guard case .record(let record) = change.change else { return }
            summary.first += 1
            index[RecordKey(record.id)] = (record.id, record.recordType, record.contentDigest)
            try checkAssets(record, source: first, inFirst: true, summary: &summary, report: report)
        }
        try second.forEachChange { change in
            guard case .record(let record) = change.change else { return }
            summary.second += 1
            try checkAssets(record, source: second, inFirst: false, summary: &summary, report: report)
            let key = RecordKey(record.id)
            guard let known = index.removeValue(forKey: key) else {
                summary.onlyInSecond += 1
                try report(.onlyInSecond(record.id, recordType: record.recordType))
                return
            }
            if known.digest == record.contentDigest {
                summary.identical += 1
            } else {
                summary.differing += 1
                try report(.differs(record.id, recordType: record.recordType))
            }
        }
        let rest = index.values.sorted { ($0.id.zoneID.zoneName, $0.id.recordName) < ($1.id.zoneID.zoneName, $1.id.recordName) }
        for value in rest {
            summary.onlyInFirst += 1
            try report(.onlyInFirst(value.id, recordType: value.type))
        }
        return summary
    }

    private static func checkAssets(
        _ record: Record, source: any ChangeSource, inFirst: Bool, summary: inout Summary, report: (Difference) throws -> Void
    ) throws {
        guard let provider = source.assets else { return }
        for field in record.fields {
            for asset in field.value.assets where !provider.canProvide(asset) {
                summary.missingAssets += 1
                try report(.missingAsset(record.id, field: field.name, asset.sha256, inFirst: inFirst))
            }
        }
    }
}
