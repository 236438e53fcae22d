import FerryCore
import FerryJSON
import FerryRecords
import FerryTextInput

/// Collects rejected records: each goes to the reject file (JSON Lines, written atomically at the end), the first
/// few to stderr, and in `--json` mode an `error` message to stdout.
final class RejectLog {
    private let file: AtomicOutputFile?
    private let console: Console
    private(set) var count = 0
    private static let shownOnStderr = 10

    /// A log writing to `path` (none without), which may not replace any of `files`.
    init(path: String?, console: Console, files: RunFiles) throws {
        file = try path.map { try AtomicOutputFile(path: $0, files: files, as: "the reject file") }
        self.console = console
    }

    /// Records a rejection.
    /// - Parameters:
    ///   - source: the input file, and the line and byte offset there.
    ///   - change: what was rejected, when it could be decoded.
    ///   - problems: why.
    ///   - text: the raw input line, when it is not decodable.
    func reject(
        file source: String, position: LineReader.Position, change: RecordChange?, problems: [RecordProblem], text: String?
    ) throws {
        try reject(
            source: source, location: ["line": .integer(Int64(position.line)), "offset": .integer(position.offset)],
            shownAs: "\(source):\(position.line)", change: change, problems: problems, text: text)
    }

    /// Records a change found wanting only at the end (a repeated record name), by its input file and line.
    func reject(file source: String, line: Int, change: RecordChange, problems: [RecordProblem]) throws {
        try reject(
            source: source, location: ["line": .integer(Int64(line))], shownAs: "\(source):\(line)", change: change, problems: problems,
            text: nil)
    }

    /// Records a change whose record broke CloudKit's rules, from any source.
    func reject(source: String, origin: String, change: RecordChange, problems: [RecordProblem]) throws {
        try reject(source: source, location: ["origin": .string(origin)], shownAs: origin, change: change, problems: problems, text: nil)
    }

    /// Records a change a target refused (a local store's outcome code and reason).
    func reject(source: String, origin: String, change: RecordChange, code: String, reason: String) throws {
        try reject(
            source: source, location: ["origin": .string(origin), "code": .string(code)], shownAs: origin, change: change,
            reason: "\(code): \(reason)", problems: [], text: nil)
    }

    private func reject(
        source: String, location: JSONObject, shownAs: String, change: RecordChange?, problems: [RecordProblem], text: String?
    ) throws {
        try reject(
            source: source, location: location, shownAs: shownAs, change: change, reason: problems.map(\.description).joined(separator: "; "),
            problems: problems.map { ["rule": .string($0.rule.rawValue), "path": .string($0.path), "message": .string($0.message)] }, text: text)
    }

    private func reject(
        source: String, location: JSONObject, shownAs: String, change: RecordChange?, reason: String, problems: [JSONValue], text: String?
    ) throws {
        count += 1
        var entry: JSONObject = ["file": .string(source), "reason": .string(reason), "problems": .array(problems)]
        for member in location { entry[member.key] = member.value }
        if let change {
            entry["record_type"] = .string(change.recordType)
            entry["record_name"] = .string(change.recordName)
            entry["zone"] = .string(change.zoneID.description)
            if let record = try? JSONParser.parse(change.canonicalJSON) { entry["record"] = record }
        } else if let text {
            entry["text"] = .string(text)
        }
        if let file {
            try file.file.write(JSONWriter.canonical(.object(entry)))
            try file.file.write("\n")
        }
        console.message("error", entry)
        if count <= Self.shownOnStderr, !console.json {
            let name = change.map { " \($0.recordType) \($0.recordName)" } ?? ""
            console.warning("rejected \(shownAs)\(name): \(entry["reason"]?.stringValue ?? "")")
        } else if count == Self.shownOnStderr + 1, !console.json {
            console.warning("more records rejected; see the reject file (--reject-file)")
        }
    }

    /// Writes the reject file into place.
    func commit() throws { try file?.commit() }
}
