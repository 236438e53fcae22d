import FerryBundle
import FerryCore
import FerryJSON
import FerryRecords

/// Holds ``CloudKitJSONTranscoder`` to its promise: a line it transcodes gets exactly the bytes, type, zone and assets
/// that decoding the line and writing the record in canonical form give.
///
/// Used by the tests and the `transcode` fuzz target.
package struct TranscodeOracle: Sendable {
    private let decoder: CloudKitJSONDecoder

    /// An oracle for lines decoded with `decoder` (and its asset resolver).
    package init(decoder: CloudKitJSONDecoder = CloudKitJSONDecoder()) { self.decoder = decoder }

    /// What the transcoder and the decoder made of one line.
    package struct Verdict: Sendable {
        /// Whether the transcoder transcoded the line (rather than declining it).
        package var transcoded: Bool
        /// Whether the decoder decoded it to a record.
        package var decodedRecord: Bool
        /// How the two differ in a way the transcoder must not; `nil` when they agree or it only declined.
        package var disagreement: String?
    }

    /// Transcodes and decodes one line, with a transcoder that may have seen other lines first (its caches).
    package func verdict(_ line: [UInt8], transcoder: inout CloudKitJSONTranscoder) -> Verdict {
        var json = JSONWriter()
        json.raw("garbage before")
        let prefix = json.count
        let transcoded = line.withUnsafeBytes { transcoder.transcode($0, into: &json) }
        let record: Record?
        if case .record(let decoded)? = try? decoder.decode(bytes: line) { record = decoded } else { record = nil }
        var verdict = Verdict(transcoded: transcoded != nil, decodedRecord: record != nil, disagreement: nil)
        guard let transcoded else {
            if json.count != prefix { verdict.disagreement = "a declined line left output behind" }
            return verdict
        }
        guard let record else {
            verdict.disagreement = "transcoded a line the decoder refuses or reads as a deletion"
            return verdict
        }
        let bytes = Array(json.bytes[prefix...])
        if bytes != record.canonicalJSON {
            verdict.disagreement =
                "the bytes differ: transcoded \(String(decoding: bytes, as: UTF8.self)), decoded \(String(decoding: record.canonicalJSON, as: UTF8.self))"
        } else if transcoded.recordType != record.recordType || transcoded.zoneID != record.zoneID {
            verdict.disagreement = "the type or zone differs"
        } else if let disagreement = contentDisagreement(line, record: record, transcoder: &transcoder) {
            verdict.disagreement = disagreement
        } else {
            let decodedAssets = record.fields.flatMap { field in
                field.value.assets.map { "\(field.name)=\($0.sha256):\($0.size):\($0.fileName ?? "")" }
            }
            let transcodedAssets = transcoded.assets.map { "\($0.field)=\($0.asset.sha256):\($0.asset.size):\($0.asset.fileName ?? "")" }
            if decodedAssets != transcodedAssets { verdict.disagreement = "the assets differ: \(transcodedAssets) vs \(decodedAssets)" }
        }
        return verdict
    }

    /// How the line's content form (without system fields, with its name) differs from the decoded record's: what
    /// ``Record/contentDigest`` hashes.
    private func contentDisagreement(_ line: [UInt8], record: Record, transcoder: inout CloudKitJSONTranscoder) -> String? {
        var json = JSONWriter()
        guard let content = line.withUnsafeBytes({ transcoder.transcode($0, into: &json, includeSystemFields: false, naming: true) }) else {
            return "transcoded with its system fields, declined without them"
        }
        var expected = JSONWriter()
        record.writeCloudKitJSON(to: &expected, includeSystemFields: false)
        if json.bytes != expected.bytes {
            let (transcoded, decoded) = (String(decoding: json.bytes, as: UTF8.self), String(decoding: expected.bytes, as: UTF8.self))
            return "the content differs: transcoded \(transcoded), decoded \(decoded)"
        }
        if content.recordName != record.recordName { return "the name differs: \(content.recordName ?? "none") vs \(record.recordName)" }
        return nil
    }

    /// Transcodes and decodes one line with a fresh transcoder.
    package func verdict(_ line: [UInt8]) -> Verdict {
        var transcoder = CloudKitJSONTranscoder(decoder: decoder)
        return verdict(line, transcoder: &transcoder)
    }
}

extension TranscodeOracle {
    /// How ``LinePreparer`` and decoding followed by ``ChangePreparer/prepare(_:)`` disagree on a line, in a way the
    /// line preparer must not: `nil` when they agree or it declined the line.
    ///
    /// A line it prepares must be a valid record (no problems) with the same canonical JSON, type, zone, key,
    /// references, assets and layout, and its `change` must be the decoded record.
    package func preparedDisagreement(_ line: [UInt8], lines: inout LinePreparer, validator: RecordValidator = RecordValidator()) -> String? {
        guard let fast = line.withUnsafeBytes({ lines.prepare($0) }) else { return nil }
        guard let change = try? decoder.decode(bytes: line) else { return "prepared a line the decoder refuses" }
        let slow = ChangePreparer(validator: validator).prepare(change)
        if !slow.problems.isEmpty { return "prepared a line with problems: \(slow.problems)" }
        if fast.canonicalJSON != slow.canonicalJSON { return "the canonical JSON differs" }
        if fast.recordType != slow.recordType || fast.zoneID != slow.zoneID || fast.isDeletion { return "the type or zone differs" }
        if fast.key != slow.key { return "the keys differ" }
        if !fast.references.elementsEqual(slow.references, by: { $0.target == $1.target && $0.deleteSelf == $1.deleteSelf }) {
            return "the references differ: \(fast.references.count) prepared, \(slow.references.count) decoded"
        }
        if !fast.assets.elementsEqual(slow.assets, by: { $0.field == $1.field && $0.asset == $1.asset }) { return "the assets differ" }
        if fast.layout != slow.layout { return "the layouts differ" }
        if fast.change != change { return "the change decoded from the prepared bytes differs" }
        return nil
    }
}
