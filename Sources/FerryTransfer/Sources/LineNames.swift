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
