import FerryCore
import FerryJSON
import FerryRecords
import FerryTesting
import Foundation
import Testing

@Suite struct PackCommandTests {
    static let created = ["--created-at", "2026-01-02T03:04:05Z"]

    @Test func packsTheSampleWithASummaryTable() throws {
        let scratch = try Scratch()
        let result = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "cars.tar.gz"] + Self.created, in: scratch.path)
        #expect(result.status == 0, "\(result.errors)")
        try expectSnapshot(result.output, named: "pack-cars.txt")
        #expect(result.errors.isEmpty)
    }

    @Test func reportsInJSONLines() throws {
        let scratch = try Scratch()
        let result = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "cars.tar.zst", "--json"] + Self.created, in: scratch.path)
        #expect(result.status == 0, "\(result.errors)")
        try expectSnapshot(normalized(result.output), named: "pack-cars.jsonl")
        for line in result.output.split(separator: "\n") {
            let message = try JSONParser.parse(String(line))
            #expect(message.objectValue?["message_type"]?.stringValue != nil)
        }
    }

    @Test func catGivesBackExactlyTheCanonicalFormOfWhatWasPacked() throws {
        let scratch = try Scratch()
        let pack = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "cars.zip", "-q"], in: scratch.path)
        #expect(pack.status == 0, "\(pack.errors)")
        let cat = try ferry(["cat", "cars.zip"], in: scratch.path)
        #expect(cat.status == 0, "\(cat.errors)")
        // The input, decoded and re-encoded canonically by the library, independently of the CLI.
        let provider = try DirectoryAssetProvider(root: Sample.assets)
        let decoder = CloudKitJSONDecoder { path, name in try provider.resolve(path: path, fileName: name) }
        var expected = Set<String>()
        try RecordFileReader(path: Sample.records, decoder: decoder).forEach { item in
            guard case .change(let change, _) = item else { Issue.record("sample line invalid"); return }
            expected.insert(String(decoding: change.canonicalJSON, as: UTF8.self))
        }
        let lines = cat.output.split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count)
        #expect(Set(lines) == expected)
        let notes = try ferry(["cat", "cars.zip", "--type", "Note", "--zone", "CarZone", "--no-deletions"], in: scratch.path)
        #expect(notes.output.split(separator: "\n").count == 3)
    }

    @Test func twoPacksOfTheSameInputAreByteIdentical() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("a"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.file("b"), withIntermediateDirectories: true)
        for directory in ["a", "b"] {
            let result = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "\(directory)/cars.tar.gz", "-q"], in: scratch.path)
            #expect(result.status == 0, "\(result.errors)")
            Thread.sleep(forTimeInterval: 1.1)
        }
        #expect(try scratch.read("a/cars.tar.gz") == scratch.read("b/cars.tar.gz"))
        let epoch = try ferry(
            ["pack", Sample.records, "--assets", Sample.assets, "-o", "c.tar.gz", "-q"], in: scratch.path,
            environment: ["SOURCE_DATE_EPOCH": "1700000000"])
        #expect(epoch.status == 0)
        let listing = try ferry(["ls", "c.tar.gz", "--json"], in: scratch.path)
        #expect(listing.output.contains(#""created_at":"2023-11-14T22:13:20Z""#))
    }

    @Test func readsAFileThatStartsWithAByteOrderMark() throws {
        let scratch = try Scratch()
        let line = #"{"recordName":"Car.1","recordType":"Car","fields":{"name":{"value":"ok","type":"STRING"}}}"#
        try scratch.write("bom.ndjson", "\u{FEFF}\(line)\r\n\(line.replacingOccurrences(of: "Car.1", with: "Car.2"))\r\n")
        let pack = try ferry(["pack", "bom.ndjson", "-o", "b.tar.gz", "-q"], in: scratch.path)
        #expect(pack.status == 0, "\(pack.errors)")
        let cat = try ferry(["cat", "b.tar.gz"], in: scratch.path)
        #expect(cat.output.split(separator: "\n").count == 2)
        #expect(cat.output.hasPrefix(#"{"fields":{"name":{"type":"STRING","value":"ok"}},"recordName":"Car.1""#))
    }

    @Test func rejectsBadRecordsIntoTheRejectFileAndExitsOne() throws {
        let scratch = try Scratch()
        try scratch.write(
            "in.ndjson",
            """
            {"recordName":"Car.1","recordType":"Car","fields":{"name":{"value":"ok","type":"STRING"}}}
            {"recordName":"bäd","recordType":"Car","fields":{}}
            {"recordName":"Car.1","recordType":"Car","fields":{}}
            {"recordName":"Car.2","recordType":"Car","fields":{"name":{"value":7,"type":"INT64"}}}
            not json at all

            {"recordName":"Car.3","recordType":"Car","fields":{"photo":{"value":{"path":"nope.jpg"},"type":"ASSET"}}}
            """)
        try scratch.write("assets/keep.txt", "x")
        let result = try ferry(["pack", "in.ndjson", "--assets", "assets", "-o", "out.tar.gz", "--reject-file", "rejects.jsonl"], in: scratch.path)
        #expect(result.status == 1)
        let rejects = String(decoding: try scratch.read("rejects.jsonl"), as: UTF8.self).split(separator: "\n")
        #expect(rejects.count == 5)
        let rules = try rejects.map { line in
            try JSONParser.parse(String(line)).objectValue?["problems"]?.arrayValue?.first?.objectValue?["rule"]?.stringValue ?? ""
        }
        // A repeated name is found when the bundle is finished, so it comes last.
        #expect(rules == ["record-name", "field-type", "malformed", "asset", "duplicate"])
        let lines = try rejects.map { try JSONParser.parse(String($0)).objectValue?["line"]?.int64Value ?? 0 }
        #expect(lines == [2, 4, 5, 7, 3])
        #expect(result.output.contains("5 records rejected: see rejects.jsonl"))
        let verify = try ferry(["verify", "out.tar.gz"], in: scratch.path)
        #expect(verify.status == 0)
        #expect(verify.output.contains("1 record"))
    }

    @Test func dryRunReportsTheSameCountsAndWritesNothing() throws {
        let scratch = try Scratch()
        let dry = try ferry(
            ["pack", Sample.records, "--assets", Sample.assets, "-o", "cars.tar.gz", "-n", "--json"] + Self.created, in: scratch.path)
        #expect(dry.status == 0, "\(dry.errors)")
        #expect(scratch.listing().isEmpty)
        let real = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "cars.tar.gz", "--json"] + Self.created, in: scratch.path)
        func summary(_ text: String) throws -> JSONObject {
            let line = try #require(text.split(separator: "\n").last)
            var object = try #require(try JSONParser.parse(String(line)).objectValue)
            for key in ["dry_run", "bundle_bytes", "seconds"] { object[key] = nil }
            return object
        }
        #expect(try summary(dry.output) == summary(real.output))
        #expect(dry.output.contains(#""dry_run":true"#))
    }

    @Test func aDryRunCountsRepeatedRecordsAsARealRunDoes() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("tmp"), withIntermediateDirectories: true)
        // Every record twice: the second file's are repeats, found only when the bundle is finished.
        let arguments = ["pack", Sample.records, Sample.records, "--assets", Sample.assets, "-o", "cars.tar.gz", "--json", "--temp-dir", "tmp"]
        let dry = try ferry(arguments + ["-n"] + Self.created, in: scratch.path)
        #expect(dry.status == 1, "\(dry.errors)")
        #expect(scratch.listing() == ["tmp"], "no bundle, and the scratch files are gone: \(scratch.listing())")
        let real = try ferry(arguments + ["--reject-file", "rejects.jsonl"] + Self.created, in: scratch.path)
        #expect(real.status == 1, "\(real.errors)")
        func summary(_ text: String) throws -> JSONObject {
            let line = try #require(text.split(separator: "\n").last)
            var object = try #require(try JSONParser.parse(String(line)).objectValue)
            for key in ["dry_run", "bundle_bytes", "seconds"] { object[key] = nil }
            return object
        }
        let counted = try summary(real.output)
        #expect(try summary(dry.output) == counted)
        let kept = (counted["records"]?.int64Value ?? 0) + (counted["deletions"]?.int64Value ?? 0)
        #expect(kept > 0 && counted["rejected"]?.int64Value == kept, "each change once in, once rejected")
        let rejects = String(decoding: try scratch.read("rejects.jsonl"), as: UTF8.self).split(separator: "\n")
        #expect(rejects.count == Int(kept))
        #expect(rejects.allSatisfy { $0.contains(#""rule":"duplicate""#) })
    }

    @Test func readsCloudKitResponsesArraysAndPrettyPrintedRecords() throws {
        // The sample's lines as CloudKit Web Services returns records, as an array, and pretty-printed one after
        // another: each gives the same bundle contents as the NDJSON.
        let scratch = try Scratch()
        let lines = String(decoding: try Data(contentsOf: URL(fileURLWithPath: Sample.records)), as: UTF8.self)
            .split(separator: "\n").filter { !$0.isEmpty }
        let pretty = try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self)
        }
        try scratch.write(
            "response.json", "{\n\"syncToken\": \"t]\",\n\"records\": [\n" + pretty.joined(separator: ",\n") + "\n],\n\"moreComing\": false}\n")
        try scratch.write("array.json", "[" + lines.joined(separator: ",\n") + "]")
        try scratch.write("pretty.json", pretty.joined(separator: "\n"))
        let reference = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "ndjson.tar.gz", "-q"], in: scratch.path)
        #expect(reference.status == 0, "\(reference.errors)")
        let expected = try ferry(["cat", "ndjson.tar.gz"], in: scratch.path).output
        for name in ["response.json", "array.json", "pretty.json"] {
            let pack = try ferry(["pack", name, "--assets", Sample.assets, "-o", "\(name).tar.gz", "-q"], in: scratch.path)
            #expect(pack.status == 0, "\(name): \(pack.errors)")
            #expect(try ferry(["cat", "\(name).tar.gz"], in: scratch.path).output == expected, "\(name)")
        }
        let piped = try ferry(
            ["pack", "-", "--assets", Sample.assets, "-o", "stdin.tar.gz", "-q"], in: scratch.path, input: try scratch.read("response.json"))
        #expect(piped.status == 0, "\(piped.errors)")
        #expect(try ferry(["cat", "stdin.tar.gz"], in: scratch.path).output == expected)
    }

    @Test func namesTheLineOfABadRecordInADocumentAndStopsAtABrokenOne() throws {
        let scratch = try Scratch()
        try scratch.write(
            "records.json",
            """
            [
              {"recordName": "Car.1", "recordType": "Car", "fields": {}},
              {"recordName": "bäd",
               "recordType": "Car", "fields": {}}
            ]
            """)
        let result = try ferry(["pack", "records.json", "-o", "out.tar.gz", "--reject-file", "rejects.jsonl", "-q"], in: scratch.path)
        #expect(result.status == 1)
        let reject = try JSONParser.parse(String(decoding: try scratch.read("rejects.jsonl"), as: UTF8.self).trimmingCharacters(in: .newlines))
        #expect(reject.objectValue?["line"]?.int64Value == 3)
        try scratch.write("broken.json", "[\n{\"recordName\": \"a\", \"recordType\": \"T\", \"fields\": {}}\n{\"recordName\": \"b\"}\n]")
        let broken = try ferry(["pack", "broken.json", "-o", "broken.tar.gz"], in: scratch.path)
        #expect(broken.status == 65)
        #expect(broken.errors.contains("broken.json: line 3, byte 55: expected \",\" or \"]\" after a record in the array"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("broken.tar.gz")))
    }

    @Test func namesWhatAFileIsWhenItIsNoRecordsAndWritesNothing() throws {
        let scratch = try Scratch()
        let pack = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "cars.tar.gz", "-q"], in: scratch.path)
        #expect(pack.status == 0, "\(pack.errors)")
        try scratch.write("utf16.json", Data([0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00]))
        try scratch.write("binary.ndjson", Data([0x7B, 0x00, 0x01, 0x02]))
        let cases = [
            // Decompressed first (a compressed NDJSON file is read as its content): a tar.
            ("cars.tar.gz", "cars.tar.gz is a zip or tar archive, not CloudKit records in JSON: if it is a bundle, read it with `ferry ls`"),
            ("utf16.json", "utf16.json is UTF-16 text, not CloudKit records in JSON: convert it to UTF-8: iconv -f UTF-16 -t UTF-8 utf16.json"),
            ("binary.ndjson", "binary.ndjson is binary data (a NUL byte at offset 1)"),
            (
                "\(Sample.directory)/store/CarsTrucksBuses.sqlite",
                "is an SQLite database, not CloudKit records in JSON: a Core Data store is read by `ferry copy"
            ),
        ]
        for (input, message) in cases {
            let result = try ferry(["pack", input, "-o", "out.tar.gz", "--reject-file", "rejects.jsonl"], in: scratch.path)
            #expect(result.status == 65, "\(input)")
            #expect(result.errors.contains(message), "\(result.errors)")
            #expect(!FileManager.default.fileExists(atPath: scratch.file("out.tar.gz")))
            #expect(!FileManager.default.fileExists(atPath: scratch.file("rejects.jsonl")))
        }
        let piped = try ferry(["pack", "-", "-o", "out.tar.gz"], in: scratch.path, input: try scratch.read("cars.tar.gz"))
        #expect(piped.status == 65)
        #expect(piped.errors.contains("is a zip or tar archive"))
    }

    @Test func readsCompressedRecordFiles() throws {
        let scratch = try Scratch()
        let reference = try ferry(["pack", Sample.records, "--assets", Sample.assets, "-o", "ndjson.tar.gz", "-q"], in: scratch.path)
        #expect(reference.status == 0, "\(reference.errors)")
        let expected = try ferry(["cat", "ndjson.tar.gz"], in: scratch.path).output
        for tool in ["gzip", "zstd"] {
            let compressed = try ProcessResult.run("/usr/bin/\(tool)", ["-c", Sample.records])
            let input = try scratch.write("records.ndjson.\(tool)", compressed.stdout)
            let pack = try ferry(["pack", input, "--assets", Sample.assets, "-o", "\(tool).tar.gz", "-q"], in: scratch.path)
            #expect(pack.status == 0, "\(tool): \(pack.errors)")
            #expect(try ferry(["cat", "\(tool).tar.gz"], in: scratch.path).output == expected, "\(tool)")
            let cut = try scratch.write("cut.\(tool)", compressed.stdout.prefix(compressed.stdout.count - 9))
            let truncated = try ferry(["pack", cut, "--assets", Sample.assets, "-o", "cut.tar.gz"], in: scratch.path)
            #expect(truncated.status == 65, "\(tool)")
            #expect(truncated.errors.contains("data ends early"), "\(truncated.errors)")
            #expect(!FileManager.default.fileExists(atPath: scratch.file("cut.tar.gz")))
        }
    }

    @Test func readsStandardInput() throws {
        let scratch = try Scratch()
        let input = Data(#"{"recordName":"a","recordType":"T","fields":{}}"#.utf8)
        let result = try ferry(["pack", "-", "-o", "in.tar.gz", "-q"], in: scratch.path, input: input)
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            try ferry(["cat", "in.tar.gz"], in: scratch.path).output
                == #"{"fields":{},"recordName":"a","recordType":"T","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"_defaultZone"}}"#
                + "\n")
    }

    @Test func packsTheOperationsOfCloudKitModifyRequests() throws {
        // Apple's own request examples (without the note on where they come from), a pretty-printed request whose zone
        // comes last, and a one-line request among NDJSON records.
        guard let create = SharedFixtures.cloudKitExample("01-apple-modify-create-request.json"),
            let update = SharedFixtures.cloudKitExample("02-apple-modify-update-request.json")
        else { return }
        let scratch = try Scratch()
        for (path, name) in [(create, "create.json"), (update, "update.json")] {
            var request = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            request["_source"] = nil
            try scratch.write(name, String(decoding: try JSONSerialization.data(withJSONObject: request, options: [.prettyPrinted]), as: UTF8.self))
        }
        try scratch.write(
            "request.json",
            """
            {
              "operations": [
                {"operationType": "create", "record": {"recordName": "Car.1", "recordType": "Car", "fields": {"name": {"value": "A"}}}},
                {"operationType": "forceUpdate", "record": {"recordName": "Car.2", "recordType": "Car", "fields": {}}},
                {"operationType": "forceDelete", "record": {"recordName": "Car.3", "recordType": "Car"}}
              ],
              "zoneID": {"zoneName": "CarZone"}
            }
            """)
        try scratch.write(
            "log.ndjson",
            """
            {"operations": [{"operationType": "create", "record": {"recordName": "Note.1", "recordType": "Note"}}, {"operationType": "delete", "record": {"recordName": "Note.2"}}], "zoneID": {"zoneName": "CarZone"}}
            {"recordName": "Note.1", "recordType": "Note", "zoneID": {"zoneName": "CarZone"}, "fields": {}}
            """)
        let result = try ferry(
            ["pack", "create.json", "update.json", "request.json", "log.ndjson", "-o", "out.tar.gz", "--reject-file", "rejects.jsonl", "--json"],
            in: scratch.path)
        #expect(result.status == 1, "\(result.errors)")
        let rejects = try String(decoding: try scratch.read("rejects.jsonl"), as: UTF8.self).split(separator: "\n").map {
            try #require(JSONParser.parse(String($0)).objectValue)
        }
        // Each operation is named by its file, the line it starts on and its path; a repeated name found at the end
        // by its own line, after a line of two operations.
        let places = rejects.map {
            "\($0["file"]?.stringValue ?? "") \($0["line"]?.int64Value ?? 0) \($0["problems"]?.arrayValue?.first?.objectValue?["path"]?.stringValue ?? "")"
        }
        #expect(
            places == [
                "update.json 3 operations[0].operationType", "request.json 4 operations[1].operationType",
                "log.ndjson 1 operations[1].record.recordType", "log.ndjson 2 recordName",
            ])
        #expect(rejects[0]["text"]?.stringValue?.contains("\"recordChangeTag\"") == true)
        let cat = try ferry(["cat", "out.tar.gz"], in: scratch.path)
        #expect(
            cat.output.split(separator: "\n").map(String.init) == [
                #"{"fields":{"firstName":{"type":"STRING","value":"Mei"},"lastName":{"type":"STRING","value":"Chen"}},"recordName":"Mei Chen","recordType":"Artist","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"_defaultZone"}}"#,
                #"{"fields":{"name":{"type":"STRING","value":"A"}},"recordName":"Car.1","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
                #"{"fields":{},"recordName":"Note.1","recordType":"Note","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
                #"{"deleted":true,"recordName":"Car.3","recordType":"Car","zoneID":{"ownerRecordName":"__defaultOwner__","zoneName":"CarZone"}}"#,
            ])
        #expect(try ferry(["verify", "out.tar.gz"], in: scratch.path).status == 0)
    }
}

@Suite struct PackFileSizeLimitTests {
    @Test(
        "past a file-size limit (ulimit -f) pack fails with exit 73 and the file's name, and leaves no partial bundle or scratch",
        arguments: ["tar.zst", "tar.gz", "zip"])
    func fileSizeLimit(format: String) throws {
        let scratch = try Scratch()
        // 3 MB that do not compress, where the limit is 1 MB: the compressor's output crosses it.
        var generator = SeededGenerator(seed: 3)
        let noise = generator.bytes(3_000_000)
        _ = try scratch.write("assets/noise.bin", noise)
        _ = try scratch.write(
            "records.ndjson", #"{"recordName":"Car.1","recordType":"Car","fields":{"photo":{"value":{"path":"noise.bin"},"type":"ASSET"}}}"# + "\n")
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.file("tmp"), withIntermediateDirectories: true)
        let result = try ProcessResult.run(
            "/bin/sh",
            [
                "-c", #"ulimit -f 2048; exec "$0" "$@""#, TestEnvironment.ferryBinary, "pack", "records.ndjson", "--assets", "assets",
                "-o", "out/b.\(format)", "--temp-dir", "tmp",
            ], in: scratch.path)
        #expect(result.status == 73, "\(result.errors)")
        #expect(result.errors.contains("File too large"), "\(result.errors)")
        #expect(result.errors.contains("b.\(format)"), "\(result.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("out")).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("tmp")).isEmpty)
    }
}
