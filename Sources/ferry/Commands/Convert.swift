import ArgumentParser
import FerryCore
import FerryJSON
import FerryPlist

/// `ferry convert`: property lists and keyed archives as JSON.
struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print property lists and NSKeyedArchiver archives as JSON.",
        discussion: """
            A plain plist becomes its JSON form (dates ISO 8601, data base64, UIDs {"$uid": n}). A keyed archive \
            becomes its decoded object graph: Foundation values as plain JSON, other objects as {"$class": …}; an \
            object used more than once is written once with "$id" and as {"$ref": id} elsewhere (cycles too). \
            Binary, XML and OpenStep plists are read. With several files, each is one JSON line.

            A plain plist may use one object in many places; its JSON repeats it at each, so a small file can stand \
            for a huge text. The JSON is written as it is made, in constant memory, after its exact size is worked \
            out: past --max-output (1 GiB by default) the file is refused, naming the object repeated most.

            Examples:
              ferry convert cache.plist record.archive
              ferry convert big.plist --max-output 4G > big.json
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Property list or archive files.")
    var files: [String]

    @Flag(help: "Show the plist layer of an archive instead of decoding its objects.")
    var raw = false

    @Option(
        help: ArgumentHelp(
            "The most JSON a plain plist may print, in bytes or with K, M, G, T (powers of 1024; default 1G).", valueName: "size"),
        transform: { text in
            guard let bytes = ByteSize.parse(text) else {
                throw ValidationError("--max-output \(text): expected a size such as 1073741824, 512M or 2G")
            }
            return bytes
        })
    var maxOutput: Int64 = 1 << 30

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "convert") { console in
            var worst: Int32 = 0
            for file in files {
                do {
                    let document = try PlistDocument(bytes: try InputFile.contents(of: file, limit: 1 << 30))
                    if !raw, let value = try PlistConversion.archiveJSON(document) {
                        if console.json {
                            console.message("result", ["file": .string(file), "format": .string(document.format.rawValue), "value": value])
                        } else if files.count > 1 {
                            console.line(String(decoding: JSONWriter.canonical(["file": .string(file), "value": value]), as: UTF8.self))
                        } else {
                            console.line(JSONWriter.prettyText(value).dropLast().description)
                        }
                        continue
                    }
                    // A plain plist (or an archive's plist layer): measured first, then streamed.
                    var limits = PlistLimits()
                    limits.maxJSONBytes = maxOutput
                    let single = files.count == 1 && !console.json
                    let text = try document.json(style: single ? .pretty(indent: 0) : .canonical, limits: limits)
                    var head = JSONWriter()
                    if console.json {
                        head.raw(#"{"file":"#)
                        head.string(file)
                        head.raw(#","format":"#)
                        head.string(document.format.rawValue)
                        head.raw(#","message_type":"result","value":"#)
                    } else if !single {
                        head.raw(#"{"file":"#)
                        head.string(file)
                        head.raw(#","value":"#)
                    }
                    try head.bytes.withUnsafeBytes { try console.raw($0) }
                    try text.write { piece in try piece.withUnsafeBytes { try console.raw($0) } }
                    try Array((single ? "\n" : "}\n").utf8).withUnsafeBytes { try console.raw($0) }
                } catch let error as PlistError {
                    console.errorStream("ferry: error: \(file): \(error.message)")
                    console.message("error", ["file": .string(file), "error": .string(error.codeName), "message": .string(error.message)])
                    worst = max(worst, ExitCodes.code(for: error))
                }
            }
            return worst
        }
    }
}

/// Turns keyed archives into the JSON `convert` prints (shared objects once, with `$id` and `$ref`).
enum PlistConversion {
    /// The decoded object graph of a keyed archive; `nil` for a plain plist.
    static func archiveJSON(_ document: PlistDocument) throws(PlistError) -> JSONValue? {
        guard let top = try document.decodeArchive() else { return nil }
        if top.count == 1, top[0].key == "root" { return top[0].value.jsonValue }
        // Several top keys (a CKRecord's system fields): one object keyed by them, sharing objects.
        let combined = ArchivedValue.dictionary(top.map { ArchivedEntry(key: .string($0.key), value: $0.value) })
        return combined.jsonValue
    }
}
