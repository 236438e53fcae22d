import FerryBackend
import FerryJSON

/// The record type and name a line of record JSON gives, read without decoding it: what names a line that does not
/// decode in a message.
struct LineNames {
    var recordType: String?
    var recordName: String?

    /// The names at the top level of `line`, as far as it reads as a JSON object (those before a damaged member).
    init(_ line: UnsafeRawBufferPointer) {
        var scanner = JSONScanner(line)
        guard (try? scanner.beginObject()) != nil else { return }
        var first = true
        while let key = try? scanner.nextRawKey(&first) {
            if key.matches("recordName") {
                recordName = try? scanner.string()
            } else if key.matches("recordType") {
                recordType = try? scanner.string()
            } else if (try? scanner.skipValue()) == nil {
                return
            }
            if recordName != nil, recordType != nil { return }
        }
    }
}

extension BackendError {
    /// The error of a source's line that does not decode as CloudKit record JSON: `origin` says where it came from (a
    /// store and zone), `recordName` names the record when the line gives its name, `reason` is the decoder's.
    static func undecodableLine(origin: String, recordName: String?, reason: String, cause: (any Error)? = nil) -> BackendError {
        BackendError(
            .damaged,
            "\(origin): \(recordName.map { "record \($0)" } ?? "a record") does not decode as CloudKit JSON (\(reason)); the source is "
                + "damaged: check it with ferry verify", cause: cause)
    }
}
