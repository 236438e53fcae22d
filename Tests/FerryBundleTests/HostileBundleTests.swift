import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// Bundles crafted to attack or confuse the reader: every one must be refused with the right code, quickly, and
/// without writing anything outside an extraction's target.
@Suite struct HostileBundleTests {
    /// A valid bundle extracted to `bag/` inside a scratch directory, to tamper with.
    private func validBag() throws -> Scratch {
        let scratch = try Scratch()
        let changes = try BundleRoundTripTests.changes(assets: scratch.file("assets"))
        try TestBundles.write(changes, to: scratch.file("bag.tar.gz"), assetDirectory: scratch.file("assets"))
        try BundleReader(path: scratch.file("bag.tar.gz")).extract(to: scratch.file("bag"))
        return scratch
    }

    /// The bag's files as a tar builder, Ferry's order (metadata first).
    private func tar(of scratch: Scratch) throws -> TarBuilder {
        let order = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data/manifest.json", "data/schema.json"]
        return try TarBuilder().addTree(scratch.file("bag"), prefix: "bag") { lhs, rhs in
            let left = order.firstIndex(of: lhs) ?? order.count
            let right = order.firstIndex(of: rhs) ?? order.count
            return left != right ? left < right : lhs < rhs
        }
    }

    /// Everything a reader can do with a bundle; returns the first error's code.
    private func failure(_ path: String, extractTo target: String? = nil) -> BundleError.Code? {
        do {
            let reader = try BundleReader(path: path)
            let report = try reader.verify()
            if let issue = report.issues.first { return issue.code }
            try reader.forEachChangeLine { _ in }
            if let target { try reader.extract(to: target) }
            return nil
        } catch let error as BundleError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func aRebuiltValidBagIsAccepted() throws {
        let scratch = try validBag()
        try tar(of: scratch).write(to: scratch.file("rebuilt.tar.gz"))
        #expect(failure(scratch.file("rebuilt.tar.gz")) == nil)
    }

    @Test func aBagRepackedWithItsTopDirectoryAsDotIsAccepted() throws {
        // `tar -czf B -C DIR .` stores "./" first and every path under it; with the bag's directory or without.
        let scratch = try validBag()
        try TarBuilder().add("./", .directory).add("./bag/", .directory).addTree(scratch.file("bag"), prefix: "./bag")
            .write(to: scratch.file("parent.tar.gz"))
        #expect(failure(scratch.file("parent.tar.gz"), extractTo: scratch.file("out-parent")) == nil)
        try TarBuilder().add("./", .directory).addTree(scratch.file("bag"), prefix: ".").write(to: scratch.file("flat.tar.gz"))
        #expect(failure(scratch.file("flat.tar.gz"), extractTo: scratch.file("out-flat")) == nil)
        #expect(FileManager.default.fileExists(atPath: scratch.file("out-flat/bagit.txt")))
    }

    @Test func theResourceForksFinderAddsBesideABagAreIgnored() throws {
        // macOS's Finder compresses a folder with a __MACOSX/ tree of "._" files beside it; they name nothing in the bag.
        let scratch = try validBag()
        try TarBuilder().add("__MACOSX/bag/._bagit.txt", .file(Data([0, 5, 22, 7]))).addTree(scratch.file("bag"), prefix: "bag")
            .add("__MACOSX/", .directory).add("__MACOSX/bag/data/._manifest.json", .file(Data([0, 5, 22, 7])))
            .write(to: scratch.file("finder.tar.gz"))
        #expect(failure(scratch.file("finder.tar.gz"), extractTo: scratch.file("out")) == nil)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out/__MACOSX")))
        // Still checked as any path is.
        try tar(of: scratch).add("__MACOSX/../../evil.txt", .file(Data("x".utf8))).write(to: scratch.file("evil.tar.gz"))
        #expect(failure(scratch.file("evil.tar.gz")) == .unsafeEntry)
    }

    @Test(arguments: [".", "./", "bag/."])
    func refusesADotThatIsNotTheTopDirectory(path: String) throws {
        // Only a directory may name the archive's top; a file there, or a "." below it, names nothing safely.
        let scratch = try validBag()
        try tar(of: scratch).add(path, .file(Data("x".utf8))).write(to: scratch.file("dot.tar.gz"))
        #expect(failure(scratch.file("dot.tar.gz")) == .unsafeEntry)
    }

    @Test(arguments: [
        ("../evil.txt", BundleError.Code.unsafeEntry),
        ("bag/../../evil.txt", .unsafeEntry),
        ("/tmp/ferry-evil-absolute.txt", .unsafeEntry),
        ("bag/data/./x", .unsafeEntry),
        ("other/evil.txt", .unsafeEntry),
    ])
    func refusesPathsThatLeaveTheBag(path: String, code: BundleError.Code) throws {
        let scratch = try validBag()
        try tar(of: scratch).add(path, .file(Data("owned".utf8))).write(to: scratch.file("evil.tar.gz"))
        #expect(failure(scratch.file("evil.tar.gz"), extractTo: scratch.file("out")) == code)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("evil.txt")))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/ferry-evil-absolute.txt"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
    }

    @Test(arguments: ["symlink", "hardlink", "device"])
    func refusesLinksAndDevices(kind: String) throws {
        let scratch = try validBag()
        let entry: TarBuilder.Kind =
            switch kind {
            case "symlink": .symlink(target: "/etc/passwd")
            case "hardlink": .hardlink(target: "bag/bagit.txt")
            default: .characterDevice
            }
        try tar(of: scratch).add("bag/data/assets/sha256/zz", entry).write(to: scratch.file("links.tar.gz"))
        #expect(failure(scratch.file("links.tar.gz"), extractTo: scratch.file("out")) == .unsafeEntry)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
    }

    @Test func refusesDuplicateEntries() throws {
        let scratch = try validBag()
        let records = try scratch.read("bag/data/records/CarZone/Car.ndjson")
        try tar(of: scratch).add("bag/data/records/CarZone/Car.ndjson", .file(records)).write(to: scratch.file("dup.tar.gz"))
        #expect(failure(scratch.file("dup.tar.gz")) == .duplicateEntry)
    }

    @Test func refusesAChangedRecordFile() throws {
        let scratch = try validBag()
        var bytes = try scratch.read("bag/data/records/CarZone/Car.ndjson")
        bytes[bytes.count / 2] ^= 0x01
        try scratch.write("bag/data/records/CarZone/Car.ndjson", bytes)
        try tar(of: scratch).write(to: scratch.file("flip.tar.gz"))
        #expect(failure(scratch.file("flip.tar.gz")) == .checksumMismatch)
        #expect(failure(scratch.file("bag")) == .checksumMismatch)
    }

    @Test func refusesAChangedAsset() throws {
        let scratch = try validBag()
        let asset = try #require(scratch.listing().first { $0.hasPrefix("bag/data/assets/sha256/") && $0.count > 40 })
        try scratch.write(asset, Data("other bytes".utf8))
        #expect(failure(scratch.file("bag")) != nil)
    }

    @Test func refusesTruncatedArchives() throws {
        let scratch = try validBag()
        for format in ArchiveFormat.allCases {
            let path = scratch.file("whole.\(format.rawValue)")
            try TestBundles.write(try BundleRoundTripTests.changes(assets: scratch.file("assets")), to: path, assetDirectory: scratch.file("assets"))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for fraction in [0.3, 0.7, 0.95] {
                let cut = scratch.file("cut-\(fraction).\(format.rawValue)")
                try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: URL(fileURLWithPath: cut))
                let code = failure(cut)
                #expect(code != nil, "\(format) cut at \(fraction) was accepted")
            }
        }
    }

    @Test func refusesEntriesLargerThanDeclared() throws {
        let scratch = try validBag()
        var bytes = try scratch.read("bag/data/records/CarZone/Car.ndjson")
        bytes.append(contentsOf: Array("{\"extra\":1}\n".utf8))
        try scratch.write("bag/data/records/CarZone/Car.ndjson", bytes)
        try tar(of: scratch).write(to: scratch.file("big.tar.gz"))
        #expect(failure(scratch.file("big.tar.gz")) == .entryTooLarge)
        // The message says where the size was declared.
        let issue = try BundleReader(path: scratch.file("big.tar.gz")).verify().issues.first { $0.code == .entryTooLarge }
        #expect(issue?.message.contains("bytes data/manifest.json declares for it") == true, "\(String(describing: issue))")
    }

    @Test func refusesUnknownFormatVersions() throws {
        let scratch = try validBag()
        let info = String(decoding: try scratch.read("bag/bag-info.txt"), as: UTF8.self)
        try scratch.write("bag/bag-info.txt", info.replacingOccurrences(of: "Ferry-Bundle-Version: 1", with: "Ferry-Bundle-Version: 2"))
        try rewriteTagManifest(scratch)
        try tar(of: scratch).write(to: scratch.file("v2.tar.gz"))
        #expect(failure(scratch.file("v2.tar.gz")) == .unsupportedVersion)
    }

    @Test func refusesUnlistedAndMissingEntries() throws {
        let scratch = try validBag()
        try tar(of: scratch).add("bag/data/extra.ndjson", .file(Data("{}\n".utf8))).write(to: scratch.file("extra.tar.gz"))
        #expect(failure(scratch.file("extra.tar.gz")) == .unlistedEntry)
        try FileManager.default.removeItem(atPath: scratch.file("bag/data/records/CarZone/Car.ndjson"))
        try tar(of: scratch).write(to: scratch.file("missing.tar.gz"))
        #expect(failure(scratch.file("missing.tar.gz")) == .missingEntry)
    }

    @Test func refusesABagWithoutAnAssetItsRecordsReference() throws {
        // The asset removed from the payload, its manifest line, data/manifest.json's asset count and Payload-Oxum: a
        // BagIt validator accepts the bag, the record checks (on the fast path for canonical lines) still find the need.
        let scratch = try validBag()
        let manifest = String(decoding: try scratch.read("bag/manifest-sha256.txt"), as: UTF8.self).split(separator: "\n")
        let assetLine = try #require(manifest.first { $0.contains("data/assets/sha256/") })
        let assetPath = String(assetLine.split(separator: " ", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces)
        try FileManager.default.removeItem(atPath: scratch.file("bag/\(assetPath)"))
        try scratch.write("bag/manifest-sha256.txt", manifest.filter { $0 != assetLine }.joined(separator: "\n") + "\n")
        var payload = try #require(JSONSerialization.jsonObject(with: try scratch.read("bag/data/manifest.json")) as? [String: Any])
        payload["assets"] = ["bytes": 0, "count": 0]
        try scratch.write("bag/data/manifest.json", try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        try rewriteManifests(scratch)
        try rewritePayloadOxum(scratch)
        try tar(of: scratch).write(to: scratch.file("lacking.tar.gz"))
        let report = try BundleReader(path: scratch.file("lacking.tar.gz")).verify()
        let digest = try #require(assetPath.split(separator: "/").last)
        #expect(report.issues.map(\.code) == [.missingAsset])
        #expect(report.issues.first?.message.contains("records reference asset \(digest)") == true, "\(report.issues)")
    }

    @Test func refusesAWrongPayloadOxum() throws {
        let scratch = try validBag()
        let info = String(decoding: try scratch.read("bag/bag-info.txt"), as: UTF8.self)
        let lines = info.split(separator: "\n").map { line -> String in
            guard line.hasPrefix("Payload-Oxum: ") else { return String(line) }
            let parts = line.dropFirst(14).split(separator: ".")
            return "Payload-Oxum: \((Int(parts[0]) ?? 0) + 1).\(parts[1])"
        }
        try scratch.write("bag/bag-info.txt", lines.joined(separator: "\n") + "\n")
        try rewriteTagManifest(scratch)
        try tar(of: scratch).write(to: scratch.file("oxum.tar.gz"))
        #expect(failure(scratch.file("oxum.tar.gz")) == .payloadOxumMismatch)
    }

    @Test func refusesFilesThatAreNotBundles() throws {
        let scratch = try Scratch()
        try scratch.write("junk.tar.gz", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        #expect(failure(scratch.file("junk.tar.gz")) == .notABundle)
        try TarBuilder().add("x/readme.txt", .file(Data("hi".utf8))).write(to: scratch.file("plain.tar.gz"))
        #expect(failure(scratch.file("plain.tar.gz")) == .notABundle)
        try scratch.write("empty.tar.gz", Data())
        #expect(failure(scratch.file("empty.tar.gz")) != nil)
    }

    @Test func namesACompressionFerryDoesNotRead() throws {
        let scratch = try Scratch()
        // xz's magic number, then anything: libarchive is not asked to read it.
        try scratch.write("b.tar.xz", Data([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00] + (0..<200).map { UInt8($0) }))
        #expect(throws: BundleError.self) {
            do { _ = try BundleReader(path: scratch.file("b.tar.xz")) } catch let error as BundleError {
                #expect(error.code == .notABundle)
                #expect(error.message.contains("compressed with xz, which Ferry does not read"))
                #expect(error.message.contains("xz -dk \(scratch.file("b.tar.xz"))"))
                throw error
            }
        }
        // A bundle decompressed to a plain tar is read.
        _ = try TestBundles.write(
            BundleRoundTripTests.changes(assets: scratch.file("assets")), to: scratch.file("b.tar.gz"), assetDirectory: scratch.file("assets"))
        let plain = try ProcessResult.run("/usr/bin/gzip", ["-dk", scratch.file("b.tar.gz")])
        #expect(plain.status == 0, "\(plain.errors)")
        #expect(failure(scratch.file("b.tar")) == nil)
    }

    @Test func refusesRecordsEditedWithMatchingChecksums() throws {
        // A bag whose checksums were recomputed after an edit: BagIt accepts it, Ferry's record checks do not.
        let scratch = try validBag()
        let path = "bag/data/records/CarZone/Car.ndjson"
        // Swap a field's keys: same length, still valid JSON, but no longer canonical.
        let text = String(decoding: try scratch.read(path), as: UTF8.self)
        try scratch.write(path, text.replacingOccurrences(of: #"{"type":"STRING","value":"Car 0"}"#, with: #"{"value":"Car 0","type":"STRING"}"#))
        #expect(text != String(decoding: try scratch.read(path), as: UTF8.self))
        try rewriteManifests(scratch)
        try tar(of: scratch).write(to: scratch.file("edited.tar.gz"))
        let reader = try BundleReader(path: scratch.file("edited.tar.gz"))
        let report = try reader.verify()
        #expect(!report.isValid)
        #expect(report.issues.allSatisfy { $0.code == .invalidRecord })
    }

    @Test func namesTheFileAndLineOfEachBadRecord() throws {
        // Line 2 given line 1's record name (a duplicate) and line 3 made a bus, sizes kept, checksums recomputed:
        // only the record checks can tell.
        let scratch = try validBag()
        let path = "bag/data/records/CarZone/Car.ndjson"
        var lines = String(decoding: try scratch.read(path), as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(lines.count >= 3)
        /// The record's own name: the last `recordName` of its line (references inside fields come before it).
        func name(_ line: String) throws -> Range<String.Index> {
            let key = try #require(line.range(of: #""recordName":""#, options: .backwards))
            let end = try #require(line[key.upperBound...].firstIndex(of: "\""))
            return key.upperBound..<end
        }
        let first = String(lines[0][try name(lines[0])])
        try #require(first.utf8.count == lines[1][try name(lines[1])].utf8.count)
        lines[1].replaceSubrange(try name(lines[1]), with: first)
        lines[2] = lines[2].replacingOccurrences(of: #""recordType":"Car""#, with: #""recordType":"Bus""#)
        try scratch.write(path, lines.joined(separator: "\n") + "\n")
        try rewriteManifests(scratch)
        try tar(of: scratch).write(to: scratch.file("edited.tar.gz"))
        let report = try BundleReader(path: scratch.file("edited.tar.gz")).verify()
        let messages = report.issues.map(\.message)
        let file = "data/records/CarZone/Car.ndjson"
        #expect(messages.contains { $0.hasSuffix("\(file) line 2: record CarZone/\(first) appears more than once") }, "\(messages)")
        #expect(messages.contains { $0.contains("\(file) line 3: record type Bus does not belong in this file (Car)") }, "\(messages)")
        #expect(messages.allSatisfy { $0.contains("\(file) line 2: ") || $0.contains("\(file) line 3: ") }, "\(messages)")
    }

    @Test func namesARecordRepeatedInAnotherFileOfItsZone() throws {
        // A note given a car's name (same zone, another file): the repeat is found at the end, in the later file.
        let scratch = try validBag()
        let cars = "bag/data/records/CarZone/Car.ndjson"
        let notes = "bag/data/records/CarZone/Note.ndjson"
        /// The record's own name: the last `recordName` of its line (references inside fields come before it).
        func name(_ line: String) throws -> Range<String.Index> {
            let key = try #require(line.range(of: #""recordName":""#, options: .backwards))
            let end = try #require(line[key.upperBound...].firstIndex(of: "\""))
            return key.upperBound..<end
        }
        let carLine = try #require(String(decoding: try scratch.read(cars), as: UTF8.self).split(separator: "\n").first.map(String.init))
        let carName = String(carLine[try name(carLine)])
        var noteLines = String(decoding: try scratch.read(notes), as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(noteLines.count >= 2)
        noteLines[1].replaceSubrange(try name(noteLines[1]), with: carName)
        let edited = noteLines.joined(separator: "\n") + "\n"
        try scratch.write(notes, edited)
        // The file's size in data/manifest.json follows the edit.
        var payload = try #require(JSONSerialization.jsonObject(with: try scratch.read("bag/data/manifest.json")) as? [String: Any])
        var files = try #require(payload["files"] as? [[String: Any]])
        for index in files.indices where files[index]["path"] as? String == "data/records/CarZone/Note.ndjson" {
            files[index]["bytes"] = edited.utf8.count
        }
        payload["files"] = files
        try scratch.write("bag/data/manifest.json", try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        try rewriteManifests(scratch)
        try rewritePayloadOxum(scratch)
        try tar(of: scratch).write(to: scratch.file("repeated.tar.gz"))
        let report = try BundleReader(path: scratch.file("repeated.tar.gz")).verify()
        let messages = report.issues.map(\.message)
        #expect(
            messages == [
                "\(scratch.file("repeated.tar.gz")): data/records/CarZone/Note.ndjson line 2: record CarZone/\(carName) appears more than once"
            ],
            "\(messages)")
    }

    @Test func readsManifestsWithOtherLineEndsAndRefusesMalformedLines() throws {
        // CRLF and CR line ends, tabs between digest and path, blank lines (BagIt tools on other systems write them).
        let scratch = try validBag()
        let lines = String(decoding: try scratch.read("bag/manifest-sha256.txt"), as: UTF8.self).split(separator: "\n")
        let reshaped = lines.enumerated().map { index, line in
            index.isMultiple(of: 2) ? line.replacingOccurrences(of: "  ", with: "\t") : String(line)
        }
        try scratch.write(
            "bag/manifest-sha256.txt",
            reshaped.prefix(2).joined(separator: "\r\n") + "\r\n\r\n" + reshaped.dropFirst(2).joined(separator: "\r") + "\r")
        try rewriteTagManifest(scratch)
        try tar(of: scratch).write(to: scratch.file("line-ends.tar.gz"))
        #expect(failure(scratch.file("line-ends.tar.gz")) == nil)
        for bad in ["0123  data/x", "\(String(repeating: "g", count: 64))  data/schema.json", "\(String(repeating: "a", count: 64))  "] {
            try scratch.write("bag/manifest-sha256.txt", lines.joined(separator: "\n") + "\n" + bad + "\n")
            try rewriteTagManifest(scratch)
            try tar(of: scratch).write(to: scratch.file("bad.tar.gz"))
            #expect(failure(scratch.file("bad.tar.gz")) == .invalidMetadata, "\(bad)")
        }
    }

    @Test func readsBagsRepackedInAnotherOrder() throws {
        // Plain `tar` of an extracted bag puts data/ before the tag files: the reader takes one extra pass.
        let scratch = try validBag()
        try TarBuilder().addTree(scratch.file("bag"), prefix: "bag").write(to: scratch.file("sorted.tar.gz"))
        #expect(failure(scratch.file("sorted.tar.gz")) == nil)
        let reader = try BundleReader(path: scratch.file("sorted.tar.gz"))
        #expect(try reader.forEachChangeLine { _ in } == reader.manifest.recordCount + reader.manifest.deletionCount)
    }

    @Test func readsBundlesWrittenWithTheEarlierPercentEscape() throws {
        // Ferry escaped zone and owner names with "%XX" before "+XX"; such a bundle (its manifest line written with
        // "%25", as BagIt wants) is still read and verified.
        let scratch = try Scratch()
        let zone = ZoneID(zoneName: "..", ownerName: "_owner")
        let record = Record(recordType: "Car", recordName: "Car.1", zoneID: zone, fields: ["name": .string("Beetle")])
        try TestBundles.write([.record(record)], to: scratch.file("bag.tar.gz"))
        try BundleReader(path: scratch.file("bag.tar.gz")).extract(to: scratch.file("bag"))
        let (new, old) = ("+2E.@_owner", "%2E.@_owner")
        try FileManager.default.moveItem(atPath: scratch.file("bag/data/records/\(new)"), toPath: scratch.file("bag/data/records/\(old)"))
        let manifest = String(decoding: try scratch.read("bag/data/manifest.json"), as: UTF8.self)
        try scratch.write("bag/data/manifest.json", manifest.replacingOccurrences(of: new, with: old))
        let lines = try String(decoding: try scratch.read("bag/manifest-sha256.txt"), as: UTF8.self).split(separator: "\n").map { line in
            let path = String(line.dropFirst(66))
            let onDisk = path.replacingOccurrences(of: new, with: old)
            let digest = SHA256Hasher.digest(try scratch.read("bag/\(onDisk)")).hex
            return "\(digest)  \(onDisk.replacingOccurrences(of: "%", with: "%25"))"
        }
        try scratch.write("bag/manifest-sha256.txt", lines.joined(separator: "\n") + "\n")
        try rewriteTagManifest(scratch)
        try tar(of: scratch).write(to: scratch.file("legacy.tar.gz"))
        #expect(failure(scratch.file("legacy.tar.gz")) == nil)
        var read: [RecordChange] = []
        try BundleReader(path: scratch.file("legacy.tar.gz")).forEachChange(.init()) { read.append($0) }
        #expect(read == [.record(record)])
    }

    // MARK: - Helpers

    /// Recomputes the payload manifest entries of edited files, then the tag manifest.
    private func rewriteManifests(_ scratch: Scratch) throws {
        let manifest = String(decoding: try scratch.read("bag/manifest-sha256.txt"), as: UTF8.self)
        var lines: [String] = []
        for line in manifest.split(separator: "\n") {
            let path = String(line.split(separator: " ", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces)
            let digest = SHA256Hasher.digest(try scratch.read("bag/\(path)"))
            lines.append("\(digest.hex)  \(path)")
        }
        try scratch.write("bag/manifest-sha256.txt", lines.joined(separator: "\n") + "\n")
        try rewriteTagManifest(scratch)
    }

    /// Recomputes Payload-Oxum from the files under `data/`, then the tag manifest.
    private func rewritePayloadOxum(_ scratch: Scratch) throws {
        var bytes = 0
        var files = 0
        let data = scratch.file("bag/data")
        for path in try FileManager.default.subpathsOfDirectory(atPath: data) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: "\(data)/\(path)", isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            bytes += try scratch.read("bag/data/\(path)").count
            files += 1
        }
        let info = String(decoding: try scratch.read("bag/bag-info.txt"), as: UTF8.self)
        let lines = info.split(separator: "\n").map { $0.hasPrefix("Payload-Oxum: ") ? "Payload-Oxum: \(bytes).\(files)" : String($0) }
        try scratch.write("bag/bag-info.txt", lines.joined(separator: "\n") + "\n")
        try rewriteTagManifest(scratch)
    }

    private func rewriteTagManifest(_ scratch: Scratch) throws {
        let lines = try ["bag-info.txt", "bagit.txt", "manifest-sha256.txt"].map { name in
            "\(SHA256Hasher.digest(try scratch.read("bag/\(name)")).hex)  \(name)"
        }
        try scratch.write("bag/tagmanifest-sha256.txt", lines.joined(separator: "\n") + "\n")
    }
}

/// `extract` (unpack) and `forEachChange` (copy) check records as `verify` does: a bundle that `verify` rejects for
/// its records is never extracted, and a record filed under another type or zone is never carried.
extension HostileBundleTests {
    /// A valid bag with its `Car.ndjson` edited, manifests made to match (sizes kept: only record checks can tell).
    private func edited(_ edit: (inout String) -> Void) throws -> Scratch {
        let scratch = try validBag()
        let path = "bag/data/records/CarZone/Car.ndjson"
        var text = String(decoding: try scratch.read(path), as: UTF8.self)
        let size = text.utf8.count
        edit(&text)
        #expect(text.utf8.count == size)
        try scratch.write(path, text)
        try rewriteManifests(scratch)
        try tar(of: scratch).write(to: scratch.file("edited.tar.gz"))
        return scratch
    }

    @Test(arguments: ["not json", "bus", "unterminated"])
    func extractionRefusesWhatVerifyRefuses(edit: String) throws {
        let scratch = try edited { text in
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            switch edit {
            case "not json": lines[1] = String(repeating: "x", count: lines[1].utf8.count)
            case "bus": lines[2] = lines[2].replacingOccurrences(of: #""recordType":"Car""#, with: #""recordType":"Bus""#)
            default: lines = [lines.joined(separator: " ")]  // one line, with no end
            }
            text = lines.joined(separator: "\n")
        }
        let reader = try BundleReader(path: scratch.file("edited.tar.gz"))
        #expect(try !reader.verify().isValid)
        #expect(throws: BundleError.self) { try reader.extract(to: scratch.file("out")) }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
        #expect(!scratch.listing().contains { $0.hasPrefix(".out.partial") }, "\(scratch.listing())")
    }

    @Test func copyingRefusesARecordFiledUnderAnotherType() throws {
        let scratch = try edited { text in
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines[2] = lines[2].replacingOccurrences(of: #""recordType":"Car""#, with: #""recordType":"Bus""#)
            text = lines.joined(separator: "\n")
        }
        let reader = try BundleReader(path: scratch.file("edited.tar.gz"))
        #expect {
            try reader.forEachChange { _ in }
        } throws: { error in
            (error as? BundleError)?.message.contains("Car.ndjson line 3: a Bus record in zone CarZone, in the file of Car records") == true
        }
    }
}
