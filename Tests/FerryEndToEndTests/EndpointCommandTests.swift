import FerryCore
import FerryJSON
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// How `ferry` names sources and targets (paths, bag directories, `local:PATH`, reserved URLs), and bundle → bundle
/// copies, through the built binary.
@Suite struct EndpointCommandTests {
    static let cars = "\(TestEnvironment.packageRoot)/Samples/cars-trucks-buses/store/CarsTrucksBuses.sqlite"

    private func run(_ arguments: [String], in scratch: Scratch, expect status: Int32 = 0) throws -> ProcessResult {
        let result = try ferry(arguments, in: scratch.path)
        #expect(result.status == status, "\(arguments): \(result.errors)")
        return result
    }

    @Test func bundlesCopyIntoBundlesRecompressedAndFiltered() throws {
        let scratch = try Scratch()
        _ = try run(["copy", Self.cars, "a.tar.gz", "-q"], in: scratch)
        _ = try run(["copy", "a.tar.gz", "b.tar.zst", "-q"], in: scratch)
        let same = try run(["diff", "a.tar.gz", "b.tar.zst"], in: scratch)
        #expect(same.output.contains("identical: 13 records in both, every asset present"))
        _ = try run(["verify", "b.tar.zst", "-q"], in: scratch)
        // A part of it: notes of one zone, nothing else, and no asset the part does not use.
        _ = try run(["copy", "b.tar.zst", "notes.zip", "--type", "Note", "--zone", "CarZone", "-q"], in: scratch)
        let lines = try run(["cat", "notes.zip"], in: scratch).output.split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { $0.contains("\"recordType\":\"Note\"") && $0.contains("\"zoneName\":\"CarZone\"") })
        let listing = try run(["ls", "notes.zip", "--json"], in: scratch).output
        #expect(listing.contains("\"assets\":0"))
        // A filter that matches nothing says so.
        let nothing = try run(["copy", "a.tar.gz", "none.tar.gz", "--type", "Nope"], in: scratch)
        #expect(
            nothing.errors.contains("--type Nope: no change of the source has this record type, so none was copied; its types: Bus, Car, Note, Truck")
        )
    }

    @Test func anUnpackedBagIsASourceButNeverATarget() throws {
        let scratch = try Scratch()
        _ = try run(["copy", Self.cars, "a.tar.gz", "-q"], in: scratch)
        _ = try run(["unpack", "a.tar.gz", "bag", "-q"], in: scratch)
        _ = try run(["copy", "bag", "b.tar.zst", "-q"], in: scratch)
        _ = try run(["copy", "bag", "c.ferry", "-q"], in: scratch)
        for other in ["b.tar.zst", "c.ferry", "a.tar.gz"] {
            #expect(try run(["diff", "bag", other], in: scratch).output.contains("identical: 13 records"))
        }
        let refused = try run(["copy", "a.tar.gz", "bag"], in: scratch, expect: 64)
        #expect(refused.errors.contains("bag is a directory; a target is a bundle archive"))
        try FileManager.default.createDirectory(atPath: scratch.file("plain"), withIntermediateDirectories: false)
        let plain = try run(["copy", "plain", "x.tar.gz"], in: scratch, expect: 65)
        #expect(plain.errors.contains("plain: a directory, but not an unpacked bag (no bagit.txt)"))
    }

    @Test func localNamesAStoreUnderAnyName() throws {
        let scratch = try Scratch()
        _ = try run(["copy", Self.cars, "local:app.db", "-q"], in: scratch)
        #expect(try run(["diff", Self.cars, "local:app.db"], in: scratch).output.contains("identical: 13 records"))
        // Once it exists it is known by its tables too.
        #expect(try run(["diff", "app.db", "local:app.db"], in: scratch).output.contains("identical: 13 records"))
        _ = try run(["copy", "local:app.db", "back.tar.zst", "-q"], in: scratch)
        try scratch.write("notes.txt", "not a store")
        let refused = try run(["copy", Self.cars, "local:notes.txt"], in: scratch, expect: 64)
        #expect(refused.errors.contains("notes.txt exists and is not a Ferry local store"))
        #expect(try String(contentsOfFile: scratch.file("notes.txt"), encoding: .utf8) == "not a store")
        let missing = try run(["copy", "local:absent.db", "x.tar.gz"], in: scratch, expect: 66)
        #expect(missing.errors.contains("absent.db: no such local store"))
        // Without local: an unknown name is still refused, never made into a store.
        #expect(try run(["copy", Self.cars, "app.backup"], in: scratch, expect: 64).errors.contains("cannot tell what to write"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("app.backup")))
    }

    @Test func parallelSaysWhenItHasNothingToDo() throws {
        let scratch = try Scratch()
        let copied = try run(["copy", Self.cars, "a.ferry", "--parallel", "4"], in: scratch)
        #expect(copied.errors.contains("--parallel 4 applies to network backends; a.ferry is a local store"), "\(copied.errors)")
        #expect(
            try run(["copy", Self.cars, "b.tar.gz", "--parallel", "0"], in: scratch, expect: 64).errors.contains(
                "--parallel must be between 1 and 64"))
        #expect(!(try run(["copy", Self.cars, "c.tar.gz", "--parallel", "1", "-q"], in: scratch).errors.contains("--parallel")))
    }

    @Test func serverURLsHideTheirPasswords() throws {
        let scratch = try Scratch()
        _ = try run(["copy", Self.cars, "a.tar.gz", "-q"], in: scratch)
        let secret = "s3cret-pass"
        // A PostgreSQL server that is not there: 69, named without its password.
        for arguments in [
            ["copy", "a.tar.gz", "postgres://ferry:\(secret)@127.0.0.1:1/app?sslmode=disable"],
            ["copy", "postgresql://ferry:\(secret)@127.0.0.1:1/app?sslmode=disable", "x.tar.gz"],
            ["diff", "a.tar.gz", "postgres://ferry@127.0.0.1:1/app?password=\(secret)&sslmode=disable", "--json"],
        ] {
            let result = try run(arguments, in: scratch, expect: 69)
            #expect(result.errors.contains("cannot connect to 127.0.0.1 port 1; is the server running"), "\(result.errors)")
            #expect(!result.errors.contains(secret) && !result.output.contains(secret), "the password is never shown")
        }
        let cloudkit = try run(["copy", "a.tar.gz", "cloudkit://ferry:\(secret)@iCloud.com.example/development", "--json"], in: scratch, expect: 64)
        #expect(cloudkit.errors.contains("CloudKit is not a target in this version of Ferry yet") && !cloudkit.errors.contains(secret))
        #expect(cloudkit.errors.contains("cloudkit://ferry:****@iCloud.com.example/development"))
        let unknown = try run(["copy", "a.tar.gz", "s3://bucket/x.tar.gz"], in: scratch, expect: 64)
        #expect(unknown.errors.contains("Ferry knows no s3:// target"))
    }
}

/// `ferry ls`, `cat` and `verify` on a local store, through the backend contract.
@Suite struct BackendVerbCommandTests {
    static let cars = EndpointCommandTests.cars

    private func summary(_ output: String) throws -> JSONObject? {
        try output.split(separator: "\n").compactMap { try JSONParser.parse(String($0)).objectValue }.last { $0["message_type"] == "summary" }
    }

    @Test func lsAndCatReadALocalStoreAsTheyReadABundle() throws {
        let scratch = try Scratch()
        #expect(try ferry(["copy", Self.cars, "app.ferry", "-q"], in: scratch.path).status == 0)
        #expect(try ferry(["copy", Self.cars, "app.tar.gz", "-q"], in: scratch.path).status == 0)
        let listing = try ferry(["ls", "app.ferry", "--json"], in: scratch.path)
        #expect(listing.status == 0, "\(listing.errors)")
        let counts = try #require(try summary(listing.output))
        #expect(counts["records"] == 13 && counts["assets"] == 2 && counts["asset_bytes"] == 156)
        #expect(counts["record_types"] == ["Bus", "Note", "Car", "Truck"])
        let text = try ferry(["ls", "app.ferry"], in: scratch.path).output
        #expect(text.contains("records  13 in 4 types and 4 zones") && text.contains("CarZone             6  3-6"), "\(text)")
        // The same records, in the bundle's canonical form less their system fields.
        let fromStore = try ferry(["cat", "local:app.ferry", "--type", "Note", "--zone", "CarZone"], in: scratch.path)
        let fromBundle = try ferry(["cat", "app.tar.gz", "--type", "Note", "--zone", "CarZone", "--no-deletions"], in: scratch.path)
        func names(_ output: String) throws -> [String] {
            try output.split(separator: "\n").compactMap { try JSONParser.parse(String($0)).objectValue?["recordName"]?.stringValue }.sorted()
        }
        #expect(try names(fromStore.output).count == 3 && names(fromStore.output) == names(fromBundle.output))
        #expect(fromStore.output.split(separator: "\n").allSatisfy { $0.contains("\"recordChangeTag\"") }, "with the store's change tags")
        let nowhere = try ferry(["cat", "app.ferry", "--zone", "Nope"], in: scratch.path)
        #expect(nowhere.status == 0 && nowhere.output.isEmpty && nowhere.errors.contains("--zone Nope: app.ferry has no such zone"))
        let refused = try ferry(["ls", Self.cars], in: scratch.path)
        #expect(refused.status == 64 && refused.errors.contains("is a Core Data store; ferry ls reads bundles and backends"))
    }

    @Test func verifyChecksEveryRecordAndAssetOfALocalStore() throws {
        try #require(SQLiteShell.isAvailable, "Scripts/test installs sqlite3")
        let scratch = try Scratch()
        #expect(try ferry(["copy", Self.cars, "app.ferry", "-q"], in: scratch.path).status == 0)
        let intact = try ferry(["verify", "app.ferry"], in: scratch.path)
        #expect(intact.status == 0 && intact.output == "app.ferry: OK (13 records, 2 assets, 156 B)\n", "\(intact.output)\(intact.errors)")
        // A record whose stored body no longer matches its digest, and an asset missing a chunk.
        try SQLiteShell.execute(
            scratch.file("app.ferry"),
            "UPDATE records SET body = CAST(replace(CAST(body AS TEXT), '\"value\":14', '\"value\":15') AS BLOB) WHERE name = (SELECT min(name) FROM records WHERE type = 'Car'); "
                + "DELETE FROM asset_chunks WHERE sha256 = (SELECT min(sha256) FROM asset_chunks) AND n = 0;")
        let damaged = try ferry(["verify", "app.ferry", "--json"], in: scratch.path)
        #expect(damaged.status == 65, "\(damaged.errors)")
        #expect(try summary(damaged.output)?["problems"] == 2 && summary(damaged.output)?["valid"] == false)
        #expect(damaged.output.contains("its content does not hash to the digest stored with it"), "\(damaged.output)")
        #expect(damaged.output.contains("stored bytes do not hash to it"), "\(damaged.output)")
    }
}
