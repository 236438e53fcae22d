import FerryCore
import FerryRecords

/// The problems a bundle writer finds only when it finishes: later occurrences of a record name, and targets with
/// more DELETE_SELF references than CloudKit allows.
extension BundleWriter {
    /// Sorts the spooled records into the bundle's files, taking out the later occurrences of repeated identities
    /// and handing each to `reject`.
    func planRecords(
        order: [String], duplicates: [RecordLedger.Duplicate], reject: (DeferredProblem) throws -> Void
    ) throws -> SpoolPlan {
        var dropping: [Int: [Int: Int64]] = [:]
        for duplicate in duplicates {
            let (run, line) = RecordSpool.runAndLine(of: duplicate.location)
            dropping[run, default: [:]][line] = duplicate.sequence
        }
        let ranks = Dictionary(order.enumerated().map { ($0.element, $0.offset) }) { first, _ in first }
        return try spool.plan(
            ranks: ranks, dropping: dropping, temporaryDirectory: options.temporaryDirectory, fileListMemoryLimit: options.fileListMemoryLimit
        ) { line, origin in
            let change = try Self.decodeSpooled(line)
            try reject(
                DeferredProblem(
                    origin: origin, change: change,
                    problem: RecordProblem(
                        .error, .duplicate, at: "recordName",
                        "record \(change.zoneID)/\(change.recordName) appears more than once; each record name is unique within its zone")))
        }
    }

    /// Rebuilds what the records added to the schema and the asset list from the records kept (rare: only when
    /// duplicates were taken out).
    /// - Returns: the record types that still have records or deletions.
    func absorbAgain(_ records: SpoolPlan) throws -> Set<String> {
        schema = RecordSchema(tracksZones: false)
        assetCatalog.reset()
        var types: Set<String> = []
        try records.forEachLine { line in
            let prepared = preparer.prepare(try Self.decodeSpooled(line))
            try absorb(prepared, newLayout: recordOfNewLayout(prepared))
            types.insert(prepared.recordType)
        }
        return types
    }

    /// The warnings for targets with more DELETE_SELF references than the limit, naming the field and target of the
    /// reference that went over it (its record is read back from the spool).
    func overflowWarnings(_ overflows: [RecordLedger.Overflow]) throws -> [DeferredProblem] {
        guard !overflows.isEmpty else { return [] }
        let lines = try spool.lines(at: Set(overflows.map(\.location)))
        return try overflows.compactMap { overflow -> DeferredProblem? in
            guard let line = lines[overflow.location], case .record(let record) = try line.withUnsafeBytes(Self.decodeSpooled),
                let warning = options.validator.deleteSelfLimitWarning(in: record, target: overflow.target)
            else { return nil }
            return DeferredProblem(origin: overflow.sequence, change: .record(record), problem: warning)
        }
    }

    /// Decodes a line this writer spooled.
    static func decodeSpooled(_ line: UnsafeRawBufferPointer) throws -> RecordChange {
        do {
            return try CloudKitJSONDecoder().decode(line: line)
        } catch {
            throw BundleError(.readFailed, "a scratch file of records could not be read back: \(error)", cause: error)
        }
    }
}
