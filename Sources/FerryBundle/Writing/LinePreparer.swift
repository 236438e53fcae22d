import FerryCore
import FerryJSON
import FerryRecords

/// Prepares record lines for a ``BundleWriter`` without decoding them into records: the fast path of `ferry pack`.
///
/// A line of a shape seen before (``RecordLineShapes``: the same bytes but for its values) is prepared by filling
/// its values into that shape's canonical form. Any other line is rewritten in canonical form by
/// ``CloudKitJSONTranscoder``, the bytes are held to every per-record check by ``CanonicalRecordScanner``, and its
/// shape is learned. A line all of them decline (a deletion, an invalid record, a rare form) is the caller's to decode
/// and hand to ``ChangePreparer/prepare(_:)``, which names its problems. Every way gives the same prepared change. One
/// preparer serves one thread: it remembers the shapes, record types and zones it has seen.
///
/// ```swift
/// var lines = LinePreparer(decoder: decoder, validator: writer.preparer.validator)
/// var batch = PreparedLines()
/// switch lines.prepare(line, into: &batch) {
/// case .batched(let index): try writer.add(batch, at: index)
/// case .prepared(let prepared): try writer.add(prepared)
/// case .declined: try writer.add(try decoder.decode(line: line))
/// }
/// ```
package struct LinePreparer {
    private var transcoder: CloudKitJSONTranscoder
    private let validator: RecordValidator
    /// The record types and zones seen recently, and a scanner for each (`nil` where the type or zone is invalid):
    /// apart, so that finding one copies no scanner.
    private var files: [(recordType: String, zoneID: ZoneID)] = []
    private var scanners: [CanonicalRecordScanner?] = []
    private var facts = CanonicalRecordScanner.Facts()
    /// The shapes of lines prepared before: most lines are prepared through them.
    private var shapes: RecordLineShapes
    /// How many lines were prepared through a shape (for tests and profiling).
    package private(set) var shapedLines = 0
    private static let maxScanners = 16

    /// A preparer that reads values with `decoder` (and its asset resolver) and checks records against `validator`.
    package init(decoder: CloudKitJSONDecoder, validator: RecordValidator) {
        transcoder = CloudKitJSONTranscoder(decoder: decoder)
        self.validator = validator
        shapes = RecordLineShapes(validator: validator)
    }

    /// What became of a line given to ``prepare(_:into:)``.
    package enum Preparation {
        /// Prepared through a known shape into the batch, as its line `index`.
        case batched(Int)
        /// Prepared the full way (a line of a new shape, or with assets).
        case prepared(PreparedChange)
        /// Declined: the caller's to decode.
        case declined
    }

    /// Prepares a line that is a valid record: into `lines` when it has a known shape (most lines), else on its own.
    package mutating func prepare(_ line: UnsafeRawBufferPointer, into lines: inout PreparedLines) -> Preparation {
        let (start, referencesStart) = (lines.json.count, lines.references.count)
        if let shaped = shapes.prepare(line, into: &lines.json, references: &lines.references) {
            shapedLines += 1
            let file = lines.file(recordType: shaped.recordType, zoneID: shaped.zoneID)
            lines.entries.append(
                PreparedLines.Entry(
                    start: start, end: lines.json.count, referencesStart: Int32(referencesStart), referencesEnd: Int32(lines.references.count),
                    file: file, layout: shaped.layout, key: shaped.key))
            return .batched(lines.entries.count - 1)
        }
        return prepareUnshaped(line).map { .prepared($0) } ?? .declined
    }

    /// Prepares a line that is a valid record on its own; `nil` if it is declined.
    package mutating func prepare(_ line: UnsafeRawBufferPointer) -> PreparedChange? {
        var lines = PreparedLines()
        switch prepare(line, into: &lines) {
        case .batched(let index): return lines.change(at: index)
        case .prepared(let change): return change
        case .declined: return nil
        }
    }

    /// Prepares a line of no known shape: transcoded, scanned, and its shape learned.
    private mutating func prepareUnshaped(_ line: UnsafeRawBufferPointer) -> PreparedChange? {
        // Sized for the line, so that the bytes are handed over without growing or copying.
        var json = JSONWriter(capacity: line.count + 64)
        guard let record = transcoder.transcode(line, into: &json) else { return nil }
        let index = scannerIndex(recordType: record.recordType, zoneID: record.zoneID)
        // The references are handed over with the change; the assets come from the transcoder, with their fields.
        facts.assets.removeAll(keepingCapacity: true)
        facts.references = []
        guard let (key, layout) = json.bytes.withUnsafeBytes({ scanners[index]?.acceptWithLayout($0, index: 0, into: &facts) }) else {
            return nil
        }
        if record.assets.isEmpty {
            let model = RecordLineShapes.Model(
                canonical: json.bytes, key: key, references: facts.references, recordBytes: facts.recordBytes, layout: layout,
                recordType: record.recordType, zoneID: record.zoneID)
            shapes.learn(line, from: model, transcoder: &transcoder)
        }
        return PreparedChange(
            record: record.recordType, zoneID: record.zoneID, canonicalJSON: json.bytes, key: key, references: facts.references,
            assets: record.assets, layout: layout)
    }

    private mutating func scannerIndex(recordType: String, zoneID: ZoneID) -> Int {
        if let index = files.firstIndex(where: { $0.recordType == recordType && $0.zoneID == zoneID }) { return index }
        if files.count == Self.maxScanners {
            files.removeLast()
            scanners.removeLast()
        }
        files.insert((recordType, zoneID), at: 0)
        scanners.insert(CanonicalRecordScanner(recordType: recordType, zoneID: zoneID, validator: validator, collectingReferences: true), at: 0)
        return 0
    }
}
