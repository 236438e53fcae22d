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

    /// A record of the first source, as little as the comparison needs: its content digest and its place there.
    private struct Indexed {
        var digest: SHA256Digest
        var position: Int
    }

    /// Compares the live records of two sources (deletions mean "absent"); `report` gets each difference.
    ///
    /// The first source's records are kept as keys and digests only (about 80 bytes each, not their names); the
    /// names of those only in the first are read again from it at the end, when there are any.
    public static func compare(_ first: any ChangeSource, _ second: any ChangeSource, report: (Difference) throws -> Void) throws -> Summary {
        var summary = Summary()
        var index: [RecordKey: Indexed] = [:]
        try first.forEachChange { change in
            guard case .record(let record) = change.change else { return }
            index[RecordKey(record.id)] = Indexed(digest: record.contentDigest, position: summary.first)
            summary.first += 1
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
        guard !index.isEmpty else { return summary }
        // Only in the first: their names, from the first source again (the same changes in the same order).
        var rest: [(id: RecordID, type: String)] = []
        var position = 0
        try first.forEachChange { change in
            guard case .record(let record) = change.change else { return }
            defer { position += 1 }
            if index[RecordKey(record.id)]?.position == position { rest.append((record.id, record.recordType)) }
        }
        guard rest.count == index.count else {
            throw TransferError(.sourceChanged, "\(first.description) changed while it was compared; run again when nothing writes it")
        }
        rest.sort { ($0.id.zoneID.zoneName, $0.id.recordName) < ($1.id.zoneID.zoneName, $1.id.recordName) }
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
