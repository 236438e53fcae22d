import FerryCore
import FerryRecords

/// The problems a bundle writer finds only when it finishes: later occurrences of a record name, and targets with
/// more DELETE_SELF references than CloudKit allows.
extension BundleWriter {
    /// Takes the later occurrences of repeated identities out of their spool files, handing each to `reject`, and
    /// rebuilds what they added to the schema and the asset list from the records kept (rare: only when there are
    /// duplicates).
    /// - Returns: the record types that still have records or deletions.
    func removeDuplicates(
        _ duplicates: [RecordLedger.Duplicate], from segments: inout [RecordSpool.Key: RecordSpool.Segment],
        reject: (DeferredProblem) throws -> Void
    ) throws -> Set<String> {
        var lines: [Int: [Int: Int64]] = [:]
        for duplicate in duplicates { lines[duplicate.location.file, default: [:]][duplicate.location.line] = duplicate.sequence }
        for (key, segment) in segments.sorted(by: { $0.value.index < $1.value.index }) {
            guard let dropped = lines[segment.index] else { continue }
            segments[key] = try spool.removing(lines: Set(dropped.keys), from: segment) { line, bytes in
                let change = try Self.decodeSpooled(bytes)
                try reject(
                    DeferredProblem(
                        origin: dropped[line] ?? 0, change: change,
                        problem: RecordProblem(
                            .error, .duplicate, at: "recordName",
                            "record \(change.zoneID)/\(change.recordName) appears more than once; each record name is unique within its zone")))
            }
        }
        // A file left with no lines is no file: the bundle without the duplicates would not have it.
        segments = segments.filter { $0.value.count > 0 }
        schema = RecordSchema()
        assetCatalog.reset()
        var types: Set<String> = []
        for segment in segments.values.sorted(by: { $0.index < $1.index }) {
            try RecordSpool.forEachLine(of: segment) { _, line in
                let prepared = preparer.prepare(try Self.decodeSpooled(line))
                try absorb(prepared, newLayout: recordOfNewLayout(prepared))
                types.insert(prepared.recordType)
            }
        }
        return types
    }

    /// The warnings for targets with more DELETE_SELF references than the limit, naming the field and target of the
    /// reference that went over it (its record is read back from the spool).
    func overflowWarnings(
        _ overflows: [RecordLedger.Overflow], in segments: [RecordSpool.Key: RecordSpool.Segment]
    ) throws -> [DeferredProblem] {
        guard !overflows.isEmpty else { return [] }
        let wanted = Dictionary(grouping: overflows, by: \.location.file).mapValues { Set($0.map(\.location.line)) }
        var lines: [FileLine: [UInt8]] = [:]
        for segment in segments.values {
            guard let numbers = wanted[segment.index] else { continue }
            try RecordSpool.forEachLine(of: segment) { number, line in
                if numbers.contains(number) { lines[FileLine(file: segment.index, line: number)] = Array(line) }
            }
        }
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
