import FerryBundle
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The reference BagIt validator (Library of Congress `bagit-python`) must accept Ferry's bundles extracted with
/// plain `tar` / `unzip`.
@Suite struct BagItValidatorTests {
    @Test(arguments: ArchiveFormat.allCases)
    func referenceValidatorAcceptsExtractedBundles(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        let changes = try BundleRoundTripTests.changes(assets: scratch.file("assets"))
        let path = scratch.file("backup.\(format.rawValue)")
        try TestBundles.write(changes, to: path, assetDirectory: scratch.file("assets"))
        try FileManager.default.createDirectory(atPath: scratch.file("x"), withIntermediateDirectories: true)
        let extract: ProcessResult =
            switch format {
            case .tarGzip: try ProcessResult.run("/usr/bin/tar", ["-xzf", path, "-C", scratch.file("x")])
            case .tarZstd: try ProcessResult.run("/usr/bin/tar", ["--zstd", "-xf", path, "-C", scratch.file("x")])
            case .zip:
                try ProcessResult.run(
                    "/usr/bin/env",
                    ["python3", "-c", "import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])", path, scratch.file("x")])
            }
        #expect(extract.status == 0, "\(extract.errors)")
        let validate = try ProcessResult.run("/usr/bin/env", ["python3", "-m", "bagit", "--validate", scratch.file("x/backup")])
        #expect(validate.status == 0, "bagit-python refused the bundle (is `pip install bagit` done? Scripts/test does it): \(validate.errors)")
        #expect(validate.errors.contains("is valid"))
    }

    @Test func referenceValidatorAcceptsEscapedZoneAndOwnerNames() throws {
        // A zone named ".." and an owner with "%" and "@" are escaped in paths; the escape must need no encoding in the
        // manifests, which bagit-python does not decode.
        let scratch = try Scratch()
        let zones = [ZoneID(zoneName: ".."), ZoneID(zoneName: ".hidden", ownerName: "user%40example@x")]
        let changes = zones.map { RecordChange.record(Record(recordType: "Car", recordName: "Car.1", zoneID: $0, fields: [:])) }
        let path = scratch.file("escaped.tar.gz")
        try TestBundles.write(changes + [.deletion(Deletion(recordType: "Car", recordName: "Car.2", zoneID: zones[1]))], to: path)
        try FileManager.default.createDirectory(atPath: scratch.file("x"), withIntermediateDirectories: true)
        let extract = try ProcessResult.run("/usr/bin/tar", ["-xzf", path, "-C", scratch.file("x")])
        #expect(extract.status == 0, "\(extract.errors)")
        let listing = (FileManager.default.subpaths(atPath: scratch.file("x/escaped/data")) ?? []).sorted()
        #expect(listing.contains("records/+2E.") && listing.contains("deletions/+2Ehidden@user+2540example+40x.ndjson"), "\(listing)")
        let validate = try ProcessResult.run("/usr/bin/env", ["python3", "-m", "bagit", "--validate", scratch.file("x/escaped")])
        #expect(validate.status == 0, "bagit-python refused the bundle: \(validate.errors)")
    }
}
