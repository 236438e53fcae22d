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
    ///
    /// A backend that can be read as of one moment (``SnapshotReading``) is: records written while the check runs are
    /// neither counted nor taken for damage.
    public func verify(
        onProblem: (Problem) throws -> Void, onProgress: ((Int) async -> Void)? = nil
    ) async throws -> Report {
        try await store.withSnapshot { reader in try await verify(reader, onProblem: onProblem, onProgress: onProgress) }
    }

    /// What one record of a page is found to be: its validation errors and its content digest, or why it does not
    /// decode.
    private struct Checked: Sendable {
        var read: Result<Record, RecordFeed.UndecodableRecord>
        var errors: [String] = []
        var digest: SHA256Digest?
    }

    /// How many records are read and checked at a time.
    package static let pageSize = 2_000

    private func verify(
        _ store: any RecordStore, onProblem: (Problem) throws -> Void, onProgress: ((Int) async -> Void)?
    ) async throws -> Report {
        var report = Report()
        var assets: [SHA256Digest: Asset] = [:]
        let validator = self.validator
        for zone in try await store.zoneTokens() {
            try await RecordFeed.forEachPageOrDamage(in: zone.zoneID, of: store, pageSize: Self.pageSize) { page in
                // Validation and digests in parts side by side; then the stored digests of the page's records: compared
                // on the server where the backend can (only those that differ come back, and are looked up), else
                // looked up for all.
                let checked = try await Parts.map(page) { read in
                    guard case .success(let record) = read else { return Checked(read: read) }
                    let errors = validator.problems(in: record).filter { $0.severity == .error }.map(\.description)
                    return Checked(read: read, errors: errors, digest: RecordContent(record).digest)
                }
                var ids: [RecordID] = []
                var digests: [SHA256Digest] = []
                for item in checked {
                    if case .success(let record) = item.read, let digest = item.digest {
                        ids.append(record.id)
                        digests.append(digest)
                    }
                }
                let suspects = try await (store as? any DigestMatching)?.differing(ids, digests: digests).map { ids[$0] } ?? ids
                let versions = suspects.isEmpty ? [:] : try await store.lookup(suspects)
                for item in checked {
                    report.records += 1
                    let record: Record
                    switch item.read {
                    case .success(let read): record = read
                    case .failure(let damage):
                        report.problems += 1
                        let named = [damage.recordType, damage.recordName].compactMap { $0 }.joined(separator: " ")
                        try onProblem(
                            Problem(
                                code: "undecodable-record",
                                message:
                                    "\(named.isEmpty ? "a record" : named) in \(zone.zoneID): it does not decode as CloudKit JSON (\(damage.reason))")
                        )
                        continue
                    }
                    if !item.errors.isEmpty {
                        report.problems += 1
                        try onProblem(
                            Problem(
                                code: "invalid-record",
                                message: "\(record.recordType) \(record.recordName) in \(record.zoneID): \(item.errors.joined(separator: "; "))"))
                    }
                    if let stored = versions[record.id]?.contentDigest, stored != item.digest {
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
                await onProgress?(report.records)
            }
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
