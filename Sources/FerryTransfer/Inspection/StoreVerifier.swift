import FerryBackend
import FerryCore
import FerryRecords

/// Checks what a backend holds, through the backend contract: every record re-validated against the rules a copy
/// applies, its content digest recomputed against the one the backend keeps, and every asset a record uses streamed
/// back and hashed.
public struct StoreVerifier {
    /// One problem found.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// `invalid-record`, `undecodable-record`, `digest-mismatch`, `missing-asset`, `damaged-asset`.
        public var code: String
        /// What is wrong, naming the record or asset.
        public var message: String

        public var description: String { message }
    }

    /// What was checked.
    public struct Report: Sendable {
        /// Records checked.
        public var records = 0
        /// Distinct assets checked.
        public var assets = 0
        /// Their bytes, as read back.
        public var assetBytes: Int64 = 0
        /// Problems found.
        public var problems = 0
    }

    let store: any RecordStore
    let validator: RecordValidator

    /// A verifier of `store`; records are checked with `validator`'s rules.
    public init(store: any RecordStore, validator: RecordValidator = RecordValidator()) {
        self.store = store
        self.validator = validator
    }

    /// Checks every record and asset; `onProblem` receives each problem as it is found, `onProgress` the records
    /// checked so far.
    public func verify(
        onProblem: (Problem) throws -> Void, onProgress: ((Int) -> Void)? = nil
    ) async throws -> Report {
        var report = Report()
        var assets: [SHA256Digest: Asset] = [:]
        for zone in try await store.zones() {
            var page: [Record] = []
            func check(_ records: [Record]) async throws {
                let versions = try await store.lookup(records.map(\.id))
                for record in records {
                    report.records += 1
                    let errors = validator.problems(in: record).filter { $0.severity == .error }
                    if !errors.isEmpty {
                        report.problems += 1
                        try onProblem(
                            Problem(
                                code: "invalid-record",
                                message:
                                    "\(record.recordType) \(record.recordName) in \(record.zoneID): \(errors.map(\.description).joined(separator: "; "))"
                            ))
                    }
                    if let stored = versions[record.id]?.contentDigest, stored != RecordContent(record).digest {
                        report.problems += 1
                        try onProblem(
                            Problem(
                                code: "digest-mismatch",
                                message:
                                    "\(record.recordType) \(record.recordName) in \(record.zoneID): its content does not hash to the digest stored with it"
                            ))
                    }
                    for field in record.fields { for asset in field.value.assets { assets[asset.sha256] = asset } }
                }
                onProgress?(report.records)
            }
            try await RecordFeed.forEachRecordOrDamage(in: zone.zoneID, of: store) { read in
                guard case .success(let record) = read else {
                    if case .failure(let damage) = read {
                        report.records += 1
                        report.problems += 1
                        let named = [damage.recordType, damage.recordName].compactMap { $0 }.joined(separator: " ")
                        try onProblem(
                            Problem(
                                code: "undecodable-record",
                                message:
                                    "\(named.isEmpty ? "a record" : named) in \(zone.zoneID): it does not decode as CloudKit JSON (\(damage.reason))")
                        )
                    }
                    return
                }
                page.append(record)
                if page.count == 500 {
                    try await check(page)
                    page.removeAll(keepingCapacity: true)
                }
            }
            if !page.isEmpty { try await check(page) }
        }
        let ordered = assets.values.sorted { $0.sha256 < $1.sha256 }
        let missing = Set(try await store.missingAssets(ordered).map(\.sha256))
        for asset in ordered {
            report.assets += 1
            if missing.contains(asset.sha256) {
                report.problems += 1
                try onProblem(
                    Problem(code: "missing-asset", message: "asset \(asset.sha256) (\(asset.size) bytes): records use it, the store lacks it"))
                continue
            }
            var hasher = SHA256Hasher()
            var size: Int64 = 0
            do {
                for try await piece in try await store.assetBytes(asset) {
                    hasher.update(piece)
                    size += Int64(piece.count)
                }
            } catch let error as any FerryError {
                report.problems += 1
                try onProblem(Problem(code: "damaged-asset", message: "asset \(asset.sha256): \(error.message)"))
                continue
            }
            report.assetBytes += size
            if size != asset.size || hasher.finalize() != asset.sha256 {
                report.problems += 1
                try onProblem(
                    Problem(
                        code: "damaged-asset",
                        message: "asset \(asset.sha256): its \(size) stored bytes do not hash to it (expected \(asset.size) bytes)"))
            }
        }
        return report
    }
}
