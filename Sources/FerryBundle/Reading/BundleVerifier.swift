import FerryCore
import FerryRecords

/// The result of a full check of a bundle.
public struct VerificationReport: Sendable {
    /// Every problem found, in the order found (at most ``maxIssues`` kept; ``issueCount`` counts all).
    public var issues: [BundleError] = []
    /// The number of problems found.
    public var issueCount = 0
    /// Record lines checked.
    public var recordsChecked = 0
    /// Deletion lines checked.
    public var deletionsChecked = 0
    /// Asset files checked.
    public var assetsChecked = 0
    /// Payload bytes read.
    public var bytesChecked: Int64 = 0
    /// Warnings about records that do not make the bundle invalid, such as the DELETE_SELF limit.
    public var warnings: [String] = []

    /// How many issues are kept in ``issues``.
    public static let maxIssues = 100

    /// Whether the bundle passed.
    public var isValid: Bool { issueCount == 0 }

    mutating func add(_ issue: BundleError) {
        issueCount += 1
        if issues.count < Self.maxIssues { issues.append(issue) }
    }
}

extension BundleReader {
    /// Checks the whole bundle: every entry's path, type and size, every SHA-256, `Payload-Oxum`, and every record:
    /// that it decodes, is in canonical form, is in the file of its type and zone, follows the schema and CloudKit's
    /// rules, is unique, and that every asset it references is present.
    /// - Returns: the report; structural damage (an unsafe or unreadable archive) throws instead.
    public func verify(progress: ((Int64) -> Void)? = nil) throws -> VerificationReport {
        let verifier = BundleVerifier(reader: self)
        try scan(verifier, complete: true, progress: progress)
        verifier.finish()
        return verifier.report
    }
}

/// Checks record files line by line during a scan.
final class BundleVerifier: BundleVisitor {
    private(set) var report = VerificationReport()
    private let reader: BundleReader
    private let decoder = CloudKitJSONDecoder()
    private let validator = RecordValidator()
    private var graph = RecordTypeGraph()
    private var tally = ReferenceTally()
    private var referencedAssets: [SHA256Digest: Int64] = [:]
    private var presentAssets: Set<SHA256Digest> = []
    private var splitter = LineSplitter()
    private var current: BundleManifest.RecordFile?
    private var json = JSONWriter(capacity: 4096)

    init(reader: BundleReader) { self.reader = reader }

    func wants(_ entry: BundleEntry) -> Bool {
        if case .records = entry.kind { return true }
        return false
    }

    func begin(_ entry: BundleEntry) throws {
        guard case .records(let file) = entry.kind else { return }
        current = file
        splitter = LineSplitter()
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file = current else { return }
        do {
            try splitter.feed(bytes) { line, number in check(line: line, number: number, file: file) }
        } catch let error as BundleError {
            issue(error, file: file)
            current = nil
        }
    }

    func end(_ entry: BundleEntry, intact: Bool) throws {
        switch entry.kind {
        case .records(let file):
            defer { current = nil }
            guard current != nil else { return }
            do {
                try splitter.finish(file: file.path)
            } catch let error as BundleError {
                issue(error, file: file)
            }
            if splitter.lineCount != file.count {
                add(
                    BundleError(.invalidRecord, "\(reader.path): \(file.path) has \(splitter.lineCount) lines, data/manifest.json says \(file.count)")
                )
            }
        case .asset(let digest):
            presentAssets.insert(digest)
        default:
            break
        }
    }

    func issue(_ error: BundleError) throws { add(error) }

    func finish() {
        // Assets are only read when the scan is complete; record which ones exist from the manifest.
        for path in reader.metadata.payloadDigests.keys {
            if let digest = BundleLayout.assetDigest(inPath: path) { presentAssets.insert(digest) }
        }
        report.assetsChecked = presentAssets.count
        for (digest, size) in referencedAssets.sorted(by: { $0.key < $1.key }) where !presentAssets.contains(digest) {
            add(BundleError(.missingAsset, "\(reader.path): records reference asset \(digest) (\(size) bytes), which the bundle lacks"))
        }
        report.bytesChecked = reader.payloadBytes
    }

    private func add(_ error: BundleError) { report.add(error) }

    private func issue(_ error: BundleError, file: BundleManifest.RecordFile) {
        add(BundleError(error.code, "\(reader.path): \(file.path): \(error.message)", cause: error.cause))
    }

    private func check(line: UnsafeRawBufferPointer, number: Int, file: BundleManifest.RecordFile) {
        func fail(_ message: String) {
            add(BundleError(.invalidRecord, "\(reader.path): \(file.path) line \(number): \(message)"))
        }
        let change: RecordChange
        do {
            change = try decoder.decode(line: line)
        } catch {
            return fail(error.message)
        }
        json.reset()
        change.writeCloudKitJSON(to: &json)
        if !json.bytes.elementsEqual(line) { fail("not in canonical form (keys sorted, no spaces); it was changed after packing") }
        if change.zoneID != file.zoneID { fail("zone \(change.zoneID) does not belong in this file (zone \(file.zoneID))") }
        switch (change, file.kind) {
        case (.record(let record), .records):
            report.recordsChecked += 1
            if record.recordType != file.recordType {
                fail("record type \(record.recordType) does not belong in this file (\(file.recordType ?? ""))")
            }
            if let fields = reader.schema.recordTypes[record.recordType] {
                for (name, value) in record.fields where !(fields[name]?.accepts(value.type) ?? false) {
                    fail("field \(name) (\(value.type.tag)) is not in data/schema.json as that type")
                }
            } else {
                fail("record type \(record.recordType) is not in data/schema.json")
            }
            for problem in validator.problems(in: record) where problem.severity == .error { fail(problem.description) }
            for problem in tally.count(record) { report.warnings.append(problem.description) }
            for value in record.fields.values { for asset in value.assets { referencedAssets[asset.sha256] = asset.size } }
        case (.deletion(let deletion), .deletions):
            report.deletionsChecked += 1
            for problem in validator.problems(in: deletion) where problem.severity == .error { fail(problem.description) }
        default:
            fail("a \(change.isDeletion ? "deletion" : "record") in a \(file.kind.rawValue) file")
        }
        if !graph.register(RecordID(recordName: change.recordName, zoneID: change.zoneID), type: change.recordType) {
            fail("record \(change.zoneID)/\(change.recordName) appears more than once")
        }
    }
}
