import FerryCore
import FerryJSON
import FerryTesting
import Foundation
import Testing

@Suite struct ConvertCommandTests {
    private var fixtures: String? { SharedFixtures.directory }

    @Test func convertsArchivesToTheirObjectGraph() throws {
        guard let fixtures else { return }
        let scratch = try Scratch()
        let circular = try ferry(["convert", "\(fixtures)/bpylist2/circular_archive.plist"], in: scratch.path)
        #expect(circular.status == 0, "\(circular.errors)")
        try expectSnapshot(circular.output, named: "convert-circular-archive.json")
        let system = try ferry(["convert", "\(fixtures)/apple_cloud_notes_parser/ZSERVERRECORDDATA.bin"], in: scratch.path)
        #expect(system.status == 0)
        let value = try JSONParser.parse(system.output)
        #expect(value.objectValue?["RecordType"] == "AccountData")
        #expect(value.objectValue?["RecordID"]?.objectValue?["recordName"] == "AccountData")
        #expect(value.objectValue?["RecordCtime"] == "2019-12-07T23:45:41.680Z")
    }

    @Test func showsThePlistLayerWithRaw() throws {
        guard let fixtures else { return }
        let scratch = try Scratch()
        let raw = try ferry(["convert", "--raw", "\(fixtures)/bpylist2/circular_archive.plist"], in: scratch.path)
        let value = try JSONParser.parse(raw.output)
        #expect(value.objectValue?["$archiver"] == "NSKeyedArchiver")
        #expect(value.objectValue?["$top"] == ["root": ["$uid": 1]])
    }

    @Test func convertsSeveralFilesAsJSONLinesAndGoesOnAfterABadOne() throws {
        guard let fixtures else { return }
        let scratch = try Scratch()
        try scratch.write("bad.plist", "bplist00 garbage")
        let result = try ferry(
            ["convert", "\(fixtures)/rust-plist/binary.plist", "bad.plist", "\(fixtures)/rust-plist/utf16_bplist.plist", "--json"],
            in: scratch.path)
        #expect(result.status == 65)
        let lines = try result.output.split(separator: "\n").map { try JSONParser.parse(String($0)).objectValue }
        #expect(lines.map { $0?["message_type"]?.stringValue } == ["result", "error", "result"])
        #expect(lines[0]?["value"]?.objectValue?["Author"] == "William Shakespeare")
        #expect(result.errors.contains("bad.plist"))
    }

    @Test func inspectsArchives() throws {
        guard let fixtures else { return }
        let scratch = try Scratch()
        let result = try ferry(
            ["inspect", "\(fixtures)/swift-corelibs-foundation/Fixtures-macOS-10.14/NSAttributedString.archive"], in: scratch.path)
        #expect(result.status == 0)
        try expectSnapshot(result.output.replacingOccurrences(of: fixtures, with: "FIXTURES"), named: "inspect-attributed-string.txt")
        let json = try ferry(["inspect", "\(fixtures)/rust-plist/binary.plist", "--json"], in: scratch.path)
        let summary = try JSONParser.parse(json.output).objectValue
        #expect(summary?["keyed_archive"] == false)
        #expect(summary?["format"] == "binary")
    }

    @Test(arguments: [("missing.plist", Int32(66)), ("garbage.plist", 65), ("deep.plist", 65)] as [(String, Int32)])
    func exitsWithTheDocumentedCodes(file: String, status: Int32) throws {
        let scratch = try Scratch()
        try scratch.write("garbage.plist", "this is not a plist")
        try scratch.write("deep.plist", "<plist>" + String(repeating: "<array>", count: 600) + String(repeating: "</array>", count: 600) + "</plist>")
        for command in ["convert", "inspect"] {
            let result = try ferry([command, file], in: scratch.path)
            #expect(result.status == status, "\(command) \(file): \(result.errors)")
            #expect(result.errors.contains(file))
        }
    }
}
