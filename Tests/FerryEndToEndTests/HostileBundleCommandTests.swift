import FerryTesting
import Foundation
import Testing

/// Every kind of hostile bundle, through the binary: exit 65 from `verify`, `cat` and `unpack`, and nothing written.
@Suite struct HostileBundleCommandTests {
    enum Attack: String, CaseIterable, CustomTestStringConvertible {
        case pathTraversal, absolutePath, symlink, hardlink, device, duplicateEntry, checksumMismatch, truncation
        case unknownVersion, oversizedEntry
        var testDescription: String { rawValue }
    }

    /// Packs the sample, extracts it, and rebuilds it as a tar with one attack applied.
    private func hostileBundle(_ attack: Attack, in scratch: Scratch) throws -> String {
        let pack = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "good.tar.gz", "-q"], in: scratch.path)
        #expect(pack.status == 0)
        #expect(try ferry(["unpack", "good.tar.gz", "bag"], in: scratch.path).status == 0)
        if attack == .truncation {
            let bytes = try scratch.read("good.tar.gz")
            try scratch.write("evil.tar.gz", bytes.prefix(bytes.count * 2 / 3))
            return "evil.tar.gz"
        }
        // Edits to the files go first; then the bag is rebuilt as a tar (metadata first) with the attack's entries.
        switch attack {
        case .checksumMismatch:
            var bytes = try scratch.read("bag/data/records/CarZone/Note.ndjson")
            bytes[20] ^= 0x01
            try scratch.write("bag/data/records/CarZone/Note.ndjson", bytes)
        case .unknownVersion:
            let info = String(decoding: try scratch.read("bag/bag-info.txt"), as: UTF8.self)
            try scratch.write("bag/bag-info.txt", info.replacingOccurrences(of: "Ferry-Bundle-Version: 1", with: "Ferry-Bundle-Version: 9"))
        case .oversizedEntry:
            var records = try scratch.read("bag/data/records/BusZone/Bus.ndjson")
            records.append(contentsOf: Data(repeating: 0x20, count: 100))
            try scratch.write("bag/data/records/BusZone/Bus.ndjson", records)
        default:
            break
        }
        let first = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data/manifest.json", "data/schema.json"]
        let tar = try TarBuilder().addTree(scratch.file("bag"), prefix: "evil") { lhs, rhs in
            (first.firstIndex(of: lhs) ?? first.count, lhs) < (first.firstIndex(of: rhs) ?? first.count, rhs)
        }
        switch attack {
        case .pathTraversal: tar.add("evil/../../escaped.txt", .file(Data("x".utf8)))
        case .absolutePath: tar.add("/tmp/ferry-e2e-absolute.txt", .file(Data("x".utf8)))
        case .symlink: tar.add("evil/data/link", .symlink(target: "/etc/passwd"))
        case .hardlink: tar.add("evil/data/link", .hardlink(target: "evil/bagit.txt"))
        case .device: tar.add("evil/data/device", .characterDevice)
        case .duplicateEntry: tar.add("evil/data/schema.json", .file(try scratch.read("bag/data/schema.json")))
        default: break
        }
        try tar.write(to: scratch.file("evil.tar.gz"))
        return "evil.tar.gz"
    }

    @Test(arguments: Attack.allCases)
    func isRefusedWithExitSixtyFive(attack: Attack) throws {
        let scratch = try Scratch()
        let bundle = try hostileBundle(attack, in: scratch)
        for command in [["verify", bundle], ["cat", bundle], ["unpack", bundle, "out"]] {
            let result = try ferry(command, in: scratch.path)
            #expect(result.status == 65, "\(attack) \(command[0]): \(result.status) \(result.errors)")
            #expect(result.errors.contains("ferry:"), "\(attack) \(command[0]) gave no message")
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
        #expect(
            !FileManager.default.fileExists(
                atPath: URL(fileURLWithPath: scratch.path).deletingLastPathComponent().appendingPathComponent("escaped.txt").path))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/ferry-e2e-absolute.txt"))
        #expect(!scratch.listing().contains { $0.contains(".partial") })
    }
}
