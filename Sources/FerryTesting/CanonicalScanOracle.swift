import FerryCore
import FerryRecords

/// Holds ``CanonicalRecordScanner`` to its promise.
///
/// Each line the scanner accepts is checked the full way (decoded, re-encoded, placed, fitted to the schema and
/// validated) and must have the same key, DELETE_SELF targets and assets. Used by the tests and the `canonical` fuzz
/// target.
public struct CanonicalScanOracle {
    /// The record file the lines are checked as part of.
    package let recordType: String
    package let zoneID: ZoneID
    package let schema: RecordSchema

    /// An oracle for the lines of one record file.
    package init(recordType: String, zoneID: ZoneID, schema: RecordSchema) {
        self.recordType = recordType
        self.zoneID = zoneID
        self.schema = schema
    }

    /// What the scanner and the full checks found of one line.
    package struct Verdict: Sendable {
        /// Whether the scanner accepted the line.
        package var scannerAccepted: Bool
        /// Whether the full checks found the line a valid canonical record of the file.
        package var fullyValid: Bool
        /// How the two disagree in a way the scanner must not (it accepted a line the full checks refuse, or reported
        /// other facts); `nil` when they agree or the scanner only declined.
        package var disagreement: String?
    }

    /// Checks one line both ways.
    package func verdict(_ line: [UInt8]) -> Verdict {
        let scanned = scan(line)
        let full = fullCheck(line)
        var verdict = Verdict(scannerAccepted: scanned != nil, fullyValid: full.problem == nil, disagreement: nil)
        guard let scanned else { return verdict }
        if let problem = full.problem {
            verdict.disagreement = "the scanner accepted a line the full checks refuse: \(problem)"
        } else if let record = full.record {
            let deleteSelf = Self.deleteSelfTargets(record)
            let assets = record.fields.flatMap { $0.value.assets.map { Asset(sha256: $0.sha256, size: $0.size) } }
            if scanned.key != RecordKey(record.id) {
                verdict.disagreement = "the keys differ"
            } else if scanned.deleteSelf != deleteSelf {
                verdict.disagreement = "the DELETE_SELF targets differ: \(scanned.deleteSelf.count) scanned, \(deleteSelf.count) decoded"
            } else if scanned.assets != assets {
                verdict.disagreement = "the assets differ: \(scanned.assets) scanned, \(assets) decoded"
            }
        }
        return verdict
    }

    private func scan(_ line: [UInt8]) -> (key: RecordKey, deleteSelf: [RecordKey], assets: [Asset])? {
        guard var scanner = CanonicalRecordScanner(recordType: recordType, zoneID: zoneID, fieldTypes: schema.recordTypes[recordType]) else {
            return nil
        }
        var facts = CanonicalRecordScanner.Facts()
        guard let key = line.withUnsafeBytes({ scanner.accept($0, index: 7, into: &facts) }) else { return nil }
        precondition(facts.deleteSelf.allSatisfy { $0.line == 7 }, "DELETE_SELF targets carry another line's index")
        return (key, facts.deleteSelf.map(\.target), facts.assets.map { Asset(sha256: $0.sha256, size: $0.size) })
    }

    /// The full checks `ferry verify` makes of a record line; the record, or the first problem found.
    private func fullCheck(_ line: [UInt8]) -> (record: Record?, problem: String?) {
        let change: RecordChange
        do {
            change = try CloudKitJSONDecoder().decode(bytes: line)
        } catch {
            return (nil, "does not decode: \(error)")
        }
        guard case .record(let record) = change else { return (nil, "a deletion") }
        if change.canonicalJSON != line { return (record, "not canonical") }
        if record.recordType != recordType || record.zoneID != zoneID { return (record, "another type or zone") }
        guard let fields = schema.recordTypes[recordType] else { return (record, "type not in the schema") }
        for field in record.fields where !(fields[field.name]?.accepts(field.value.type) ?? false) {
            return (record, "field \(field.name) not in the schema as \(field.value.type)")
        }
        if let problem = RecordValidator().problems(in: record).first(where: { $0.severity == .error }) {
            return (record, problem.description)
        }
        return (record, nil)
    }

    private static func deleteSelfTargets(_ record: Record) -> [RecordKey] {
        var targets: [RecordKey] = []
        record.forEachDeleteSelfReference { _, reference in targets.append(RecordKey(reference.target)) }
        return targets
    }
}
