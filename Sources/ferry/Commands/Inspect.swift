import ArgumentParser
import FerryCore
import FerryPlist

/// `ferry inspect`: what a property list or keyed archive is.
struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe a property list or NSKeyedArchiver archive: format, objects, depth, classes, top keys.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A property list or archive file.")
    var file: String

    func run() async throws {
        try CommandRunner.run(global, label: "inspect") { console in
            let bytes = try InputFile.contents(of: file, limit: 1 << 30)
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
            return ExitCodes.success
        }
    }
}
