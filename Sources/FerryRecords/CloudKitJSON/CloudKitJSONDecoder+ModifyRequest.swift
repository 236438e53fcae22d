import FerryCore
import FerryJSON

/// Thrown by the record decoder at a key that only a CloudKit `records/modify` request has (`operations`, `atomic`,
/// `desiredKeys`, `numbersAsStrings`), so that the text is decoded as a request instead.
struct ModifyRequestKey: Error {
    var key: String
}

/// CloudKit `records/modify` request bodies (`{"operations": [{"operationType", "record"}], "zoneID", "atomic"}`,
/// `cloudkit.md` §1.2): what apps that sync by hand send, and so what they log and keep.
///
/// Each operation is decoded on its own: one that cannot be packed is an error of its own (named
/// `operations[N]…`), and the others still are packed. A record without a `zoneID` is in the request's zone, and
/// without either in the default zone, as CloudKit reads it.
///
/// | operationType | becomes |
/// |---|---|
/// | `create`, `replace`, `forceReplace` | the record (these send whole records) |
/// | `delete`, `forceDelete` | a deletion, which needs the record's `recordType` |
/// | `update`, `forceUpdate` | an error: they change only the fields they list, so they hold no whole record |
extension CloudKitJSONDecoder {
    /// One operation of a `records/modify` request.
    public struct RequestOperation: Sendable {
        /// Where the operation's object is in the request's bytes.
        public var range: Range<Int>
        /// The record or deletion it carries, or why it cannot be packed.
        public var outcome: Result<RecordChange, RecordError>
    }

    /// What the text of one record holds.
    public enum Contents: Sendable {
        /// A record dictionary: a record or a deletion.
        case change(RecordChange)
        /// A `records/modify` request: its operations, in order.
        case request([RequestOperation])
    }

    /// Decodes a record dictionary, or a `records/modify` request into its operations.
    /// - Throws: ``RecordError`` when the text is neither (for a request: when its own keys or its JSON are wrong;
    ///   a wrong operation is in its ``RequestOperation/outcome``).
    package func decodeContents(line: UnsafeRawBufferPointer) throws(RecordError) -> Contents {
        do {
            var scanner = JSONScanner(line)
            return .change(try decodeRecord(&scanner))
        } catch is ModifyRequestKey {
            return .request(try decodeRequest(line))
        } catch {
            throw Self.recordError(error)
        }
    }

    // MARK: - Requests

    private static let operationTypes = "create, update, forceUpdate, replace, forceReplace, delete or forceDelete"

    private func decodeRequest(_ bytes: UnsafeRawBufferPointer) throws(RecordError) -> [RequestOperation] {
        do {
            let (operations, zone) = try requestMembers(bytes)
            var scanner = JSONScanner(bytes)
            scanner.rewind(to: operations)
            try scanner.beginArray()
            var result: [RequestOperation] = []
            var first = true
            while try scanner.nextElement(&first) {
                _ = try scanner.peek()
                let start = scanner.offset
                try scanner.skipValue()
                let range = start..<scanner.offset
                let index = result.count
                let outcome = Result { () throws(RecordError) in
                    try operation(UnsafeRawBufferPointer(rebasing: bytes[range]), zone: zone, path: "operations[\(index)]")
                }
                result.append(RequestOperation(range: range, outcome: outcome))
            }
            return result
        } catch {
            throw Self.recordError(error)
        }
    }

    /// Reads the request's own members: where its `operations` array starts, and its zone.
    private func requestMembers(_ bytes: UnsafeRawBufferPointer) throws -> (operations: Int, zone: ZoneID) {
        var scanner = JSONScanner(bytes)
        try scanner.beginObject()
        var operations: Int?
        var zone: ZoneID?
        var seen = Set<String>()
        var first = true
        while let key = try scanner.nextRawKey(&first) {
            guard seen.insert(key.string).inserted else { throw RecordError(.invalidJSON, at: key.string, "the key appears twice") }
            switch key {
            case "operations":
                let kind = try scanner.peek()
                guard kind == .array else {
                    throw RecordError(.invalidRecord, at: "operations", "expected an array of operations, found \(kind.name)")
                }
                operations = scanner.offset
                try scanner.skipValue()
            case "zoneID":
                zone = try zoneID(&scanner, path: "zoneID")
            case "atomic", "numbersAsStrings":
                let kind = try scanner.peek()
                guard kind == .bool else { throw RecordError(.invalidRecord, at: key.string, "expected true or false, found \(kind.name)") }
                _ = try scanner.bool()
            case "desiredKeys":
                try scanner.skipValue()
            default:
                throw RecordError(
                    .invalidRecord, at: key.string,
                    "unknown key of a records/modify request; expected operations, zoneID, atomic, desiredKeys or numbersAsStrings")
            }
        }
        try scanner.finish()
        guard let operations else {
            throw RecordError(.invalidRecord, at: "operations", "missing; a records/modify request holds an array of operations")
        }
        return (operations, zone ?? .default)
    }

    /// Decodes one operation object into the change it makes.
    private func operation(_ bytes: UnsafeRawBufferPointer, zone: ZoneID, path: String) throws(RecordError) -> RecordChange {
        var operationType: String?
        var record: Range<Int>?
        do {
            var scanner = JSONScanner(bytes)
            let kind = try scanner.peek()
            guard kind == .object else { throw RecordError(.invalidRecord, at: path, "expected an operation object, found \(kind.name)") }
            try scanner.beginObject()
            var first = true
            while let key = try scanner.nextRawKey(&first) {
                switch key {
                case "operationType" where operationType == nil:
                    operationType = try string(&scanner, path: "\(path).operationType")
                case "record" where record == nil:
                    _ = try scanner.peek()
                    let start = scanner.offset
                    try scanner.skipValue()
                    record = start..<scanner.offset
                case "desiredKeys":
                    try scanner.skipValue()
                case "operationType", "record":
                    throw RecordError(.invalidJSON, at: "\(path).\(key.string)", "the key appears twice")
                default:
                    throw RecordError(
                        .invalidRecord, at: "\(path).\(key.string)", "unknown operation key; expected operationType, record or desiredKeys")
                }
            }
        } catch let error as RecordError {
            throw error
        } catch {
            throw RecordError(.invalidJSON, at: path, "not valid JSON \(error)")
        }
        guard let operationType else {
            throw RecordError(.invalidRecord, at: "\(path).operationType", "missing; expected \(Self.operationTypes)")
        }
        guard let record else { throw RecordError(.invalidRecord, at: "\(path).record", "missing; expected a record object") }
        let recordPath = "\(path).record"
        let recordBytes = UnsafeRawBufferPointer(rebasing: bytes[record])
        switch operationType {
        case "create", "replace", "forceReplace":
            let change = try decodeOperationRecord(recordBytes, zone: zone, path: recordPath)
            guard case .record = change else {
                throw RecordError(.invalidRecord, at: "\(recordPath).deleted", "a \(operationType) operation's record cannot be deleted")
            }
            return change
        case "delete", "forceDelete":
            return .deletion(try deletion(recordBytes, zone: zone, path: recordPath, operationType: operationType))
        case "update", "forceUpdate":
            throw RecordError(
                .unsupported, at: "\(path).operationType",
                "\(operationType) changes only the fields it lists and keeps the others, so it holds no whole record and packing it would lose those; if the record lists all its fields, make the operation forceReplace"
            )
        default:
            throw RecordError(.invalidRecord, at: "\(path).operationType", "unknown operation \"\(operationType)\"; expected \(Self.operationTypes)")
        }
    }

    /// Decodes an operation's record, its error paths starting at `path`.
    private func decodeOperationRecord(_ bytes: UnsafeRawBufferPointer, zone: ZoneID, path: String) throws(RecordError) -> RecordChange {
        do {
            var scanner = JSONScanner(bytes)
            return try decodeRecord(&scanner, defaultZone: zone)
        } catch let error as RecordError {
            throw RecordError(error.code, at: error.path.isEmpty ? path : "\(path).\(error.path)", error.reason, cause: error.cause)
        } catch let found as ModifyRequestKey {
            throw RecordError(.invalidRecord, at: "\(path).\(found.key)", "a request key inside a record; expected a record dictionary")
        } catch {
            throw RecordError(.invalidJSON, at: path, "not valid JSON \(error)")
        }
    }

    /// The deletion a delete operation makes; its record needs a `recordType`, which CloudKit does not ask for.
    private func deletion(_ bytes: UnsafeRawBufferPointer, zone: ZoneID, path: String, operationType: String) throws(RecordError) -> Deletion {
        do throws(RecordError) {
            switch try decodeOperationRecord(bytes, zone: zone, path: path) {
            case .record(let record): return Deletion(recordType: record.recordType, recordName: record.recordName, zoneID: record.zoneID)
            case .deletion(let deletion): return deletion
            }
        } catch let error where error.path == "\(path).recordType" && !Self.hasMember("recordType", in: bytes) {
            throw RecordError(
                .invalidRecord, at: error.path,
                "missing; a \(operationType) operation need not name the record type, but a Ferry deletion does: add \"recordType\" to the record")
        }
    }

    /// Whether the object in `bytes` (already decoded once, so well-formed) has a member named `key`.
    private static func hasMember(_ key: StaticString, in bytes: UnsafeRawBufferPointer) -> Bool {
        var scanner = JSONScanner(bytes)
        var first = true
        guard (try? scanner.beginObject()) != nil else { return false }
        while let name = try? scanner.nextRawKey(&first) {
            if name.matches(key) { return true }
            guard (try? scanner.skipValue()) != nil else { return false }
        }
        return false
    }
}
