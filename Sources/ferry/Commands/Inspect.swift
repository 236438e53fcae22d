import ArgumentParser
import FerryCore
import FerryCoreData
import FerryJSON
import FerryPlist

/// `ferry inspect`: what a Core Data store, property list or keyed archive is.
struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe a Core Data store (model, entities, counts, relationships) or a property list or archive.",
        discussion: """
            For a store: its UUID and framework version, where the model came from, each entity with its hierarchy, \
            count, attributes and relationships (kind, inverse, delete rule, ordering, storage), join tables, external \
            data, history and CloudKit tables, dangling references and schema drift. For a plist or archive: format, \
            objects, depth, classes and top keys.

            Examples:
              ferry inspect Store.sqlite
              ferry inspect Model.mom
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A Core Data store, property list or archive file.")
    var file: String

    @OptionGroup var modelOptions: ModelOptions

    func run() async throws {
        try await CommandRunner.runBlocking(global, label: "inspect") { console in
            if MagicNumber.sqlite.matches(try InputFile(path: file).readPrefix(16)) {
                return try StoreReport.print(try StoreInspection(CoreDataStore(path: file, model: modelOptions.choice)), console: console)
            }
            let bytes = try InputFile.contents(of: file, limit: 1 << 30)
            if bytes.isEmpty {
                throw PlistError(.notAPlist, "\(file): the file is empty (0 bytes): neither an SQLite store nor a property list")
            }
            let document: PlistDocument
            let inspection: PlistInspection
            do {
                document = try PlistDocument(bytes: bytes)
                inspection = try PlistInspection(document)
            } catch let error as PlistError {
                throw PlistError(error.code, at: error.offset, "\(file): \(error.reason)")
            }
            let formatName =
                switch document.format {
                case .binary: "binary plist (bplist00)"
                case .xml: "XML plist"
                case .openStep: "OpenStep plist"
                }
            console.message(
                "result",
                [
                    "file": .string(file), "format": .string(document.format.rawValue), "bytes": .integer(Int64(bytes.count)),
                    "objects": .integer(Int64(inspection.objectCount)), "depth": inspection.depth.map { .integer(Int64($0)) } ?? .null,
                    "root": .string(inspection.rootKind.rawValue), "keyed_archive": .bool(inspection.isKeyedArchive),
                    "archived_objects": .integer(Int64(inspection.archivedObjectCount)),
                    "top_keys": .array(inspection.topKeys.map { .string($0) }),
                    "classes": .array(inspection.classes.map { ["name": .string($0.name), "count": .integer(Int64($0.count))] }),
                    "problems": .array(inspection.problems.map { .string($0) }),
                ])
            console.line("file      \(file)")
            console.line("format    \(formatName), \(Formatting.bytes(Int64(bytes.count)))")
            console.line("objects   \(inspection.objectCount)")
            console.line("depth     \(inspection.depth.map(String.init) ?? "cyclic")")
            if inspection.isKeyedArchive {
                console.line(
                    "archive   NSKeyedArchiver, \(inspection.archivedObjectCount) archived objects; $top: \(inspection.topKeys.joined(separator: ", "))"
                )
                console.line("classes   \(inspection.classes.map { "\($0.name) ×\($0.count)" }.joined(separator: ", "))")
            } else {
                console.line(
                    "root      \(inspection.rootKind.rawValue)\(inspection.topKeys.isEmpty ? "" : " with keys \(inspection.topKeys.joined(separator: ", "))")"
                )
            }
            // Described, but refused by what reads it: the same verdict as convert and copy (exit 65).
            for problem in inspection.problems {
                console.message("error", ["error": "plist.refused", "message": .string("\(file): \(problem)")])
                if !console.json { console.errorStream("ferry: error: \(file): \(problem)") }
            }
            return inspection.problems.isEmpty ? ExitCodes.success : ExitCodes.code(for: .dataError)
        }
    }
}
