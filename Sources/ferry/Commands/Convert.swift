import ArgumentParser
import FerryCore
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
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Property list or archive files.")
    var files: [String]

    @Flag(help: "Show the plist layer of an archive instead of decoding its objects.")
    var raw = false

    func run() async throws {
        try CommandRunner.run(global, label: "convert") { console in
            var worst: Int32 = 0
            for file in files {
                do {
                    let document = try PlistDocument(bytes: try InputFile.contents(of: file, limit: 1 << 30))
                    let value = try PlistConversion.json(document, raw: raw)
                    if console.json {
                        console.message("result", ["file": .string(file), "format": .string(document.format.rawValue), "value": value])
                    } else if files.count > 1 {
                        console.line(String(decoding: JSONWriter.canonical(["file": .string(file), "value": value]), as: UTF8.self))
                    } else {
                        console.line(JSONWriter.prettyText(value).dropLast().description)
                    }
                } catch let error as PlistError {
                    console.errorStream("ferry: \(file): \(error.message)")
                    console.message("error", ["file": .string(file), "error": .string(error.codeName), "message": .string(error.message)])
                    worst = max(worst, ExitCodes.code(for: error))
                }
            }
            return worst
        }
    }
}

/// Turns documents into the JSON `convert` prints.
enum PlistConversion {
    static func json(_ document: PlistDocument, raw: Bool) throws(PlistError) -> JSONValue {
        if !raw, let top = try document.decodeArchive() {
            if top.count == 1, top[0].key == "root" { return top[0].value.jsonValue }
            // Several top keys (a CKRecord's system fields): one object keyed by them, sharing objects.
            let combined = ArchivedValue.dictionary(top.map { ArchivedEntry(key: .string($0.key), value: $0.value) })
            return combined.jsonValue
        }
        return try document.value().jsonValue
    }
}
