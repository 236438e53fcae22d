import FerryCore

/// Reads records and deletions from an NDJSON file of CloudKit record dictionaries, one per line.
///
/// A bad line never stops the read: it is handed over as ``Item/invalid(_:_:text:)`` with its position, so callers
/// can reject it and go on. Blank lines are skipped. Memory is bounded by the longest line allowed.
public struct NDJSONRecordReader {
    /// One line's outcome.
    public enum Item {
        /// A decoded record or deletion.
        case change(RecordChange, LineReader.Position)
        /// A line that is not a valid record, with the reason and (when it is text of a reasonable size) the line.
        case invalid(RecordError, LineReader.Position, text: String?)
    }

    /// The file.
    public let path: String
    private let decoder: CloudKitJSONDecoder
    private let maxLineLength: Int

    /// Prepares to read a file.
    /// - Parameters:
    ///   - path: the NDJSON file.
    ///   - decoder: the decoder (with an asset resolver for `path`-form assets).
    ///   - maxLineLength: the longest line accepted; longer lines are reported invalid and skipped.
    public init(path: String, decoder: CloudKitJSONDecoder, maxLineLength: Int = 64 << 20) {
        self.path = path
        self.decoder = decoder
        self.maxLineLength = maxLineLength
    }

    /// Calls `body` for every non-blank line, in order.
    /// - Throws: ``CoreError`` when the file cannot be read; whatever `body` throws.
    public func forEach(_ body: (Item) throws -> Void) throws {
        let reader = try LineReader(path: path, maxLineLength: maxLineLength)
        try reader.forEachLine { line in
            switch line {
            case .tooLong(let position, let length):
                try body(
                    .invalid(
                        RecordError(.invalidRecord, at: "", "line of \(length) bytes is longer than the \(maxLineLength)-byte limit"),
                        position, text: nil))
            case .bytes(let bytes, let position):
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
                let item: Item
                do {
                    item = .change(try decoder.decode(line: bytes), position)
                } catch let error as RecordError {
                    let text = bytes.count <= 1 << 20 ? String(validating: bytes, as: UTF8.self) : nil
                    item = .invalid(error, position, text: text)
                } catch {
                    item = .invalid(RecordError(.invalidRecord, at: "", "\(error)"), position, text: nil)
                }
                try body(item)
            }
        }
    }
}
