import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@testable import FerryBundle

/// A bundle's asset lists leave memory when large: the reader checks the same, whether they fit in memory or are in
/// scratch files of a few blocks.
@Suite struct ManyAssetsTests {
    static let count = 300

    /// A bundle of records that each have their own asset, extracted to `bag/`, and those assets.
    private func bag() throws -> (Scratch, [Asset]) {
        let scratch = try Scratch()
        var changes: [RecordChange] = []
        var assets: [Asset] = []
        for index in 0..<Self.count {
            let asset = try TestBundles.storeAsset(Data("photo \(index)".utf8), in: scratch.file("assets"))
            assets.append(asset)
            changes.append(.record(TestRecords.vehicle(index: index, photo: asset)))
        }
        try TestBundles.write(changes, to: scratch.file("bag.tar.gz"), assetDirectory: scratch.file("assets"))
        try BundleReader(path: scratch.file("bag.tar.gz")).extract(to: scratch.file("bag"))
        return (scratch, assets)
    }

    /// The bag's files: metadata first, then the others in `order` (by default, by path, as Ferry writes them).
    private func files(of scratch: Scratch, order: (String, String) -> Bool = { $0 < $1 }) -> [String] {
        let metadata = ["bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data/manifest.json", "data/schema.json"]
        let others = scratch.listing().filter { name in
            var isDirectory: ObjCBool = false
            return name.hasPrefix("bag/") && FileManager.default.fileExists(atPath: scratch.file(name), isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.map { String($0.dropFirst(4)) }.filter { !metadata.contains($0) }
        return metadata + others.sorted(by: order)
    }

    /// A tar of the bag's files, in this order (a file named twice is there twice).
    private func tar(of scratch: Scratch, _ files: [String]) throws -> TarBuilder {
        let builder = TarBuilder()
        for file in files { builder.add("bag/\(file)", .file(try scratch.read("bag/\(file)"))) }
        return builder
    }

    /// What verifying finds — each issue's message, or the error thrown — with the asset lists in memory and in
    /// scratch files of 64 digests (the smallest buffer): it must be the same.
    private func findings(_ path: String) throws -> [String] {
        var results: [[String]] = []
        for limit in [4 << 20, 512] {
            do {
                let reader = try BundleReader(path: path, temporaryDirectory: nil, scratchMemoryLimit: limit)
                let report = try reader.verify()
                #expect(report.assetsChecked == Self.count)
                results.append(report.issues.map(\.message))
            } catch let error as BundleError {
                results.append(["thrown: \(error.code)"])
            }
        }
        #expect(results[0] == results[1])
        return results[0]
    }

    @Test func aBundleOfManyAssetsVerifiesAndListsThemAll() throws {
        let (scratch, assets) = try bag()
        #expect(try findings(scratch.file("bag.tar.gz")) == [])
        #expect(try findings(scratch.file("bag")) == [])
        let reader = try BundleReader(path: scratch.file("bag.tar.gz"), temporaryDirectory: nil, scratchMemoryLimit: 512)
        for asset in assets { #expect(try reader.listsAsset(asset.sha256)) }
        #expect(try !reader.listsAsset(SHA256Hasher.digest(Array("not an asset".utf8))))
    }

    @Test func assetsInAnotherOrderAreAccepted() throws {
        let (scratch, _) = try bag()
        try tar(of: scratch, files(of: scratch, order: >)).write(to: scratch.file("reversed.tar.gz"))
        #expect(try findings(scratch.file("reversed.tar.gz")) == [])
    }

    @Test func aMissingAssetIsNamed() throws {
        let (scratch, assets) = try bag()
        let gone = BundleLayout.assetPath(assets[Self.count / 2].sha256)
        try FileManager.default.removeItem(atPath: scratch.file("bag/\(gone)"))
        try tar(of: scratch, files(of: scratch)).write(to: scratch.file("missing.tar.gz"))
        let found = try findings(scratch.file("missing.tar.gz"))
        #expect(found.contains { $0.hasSuffix("\(gone) is listed in manifest-sha256.txt but missing") })
        #expect(found.contains { $0.contains("records reference asset") } == false, "the manifest still lists it")
    }

    @Test(arguments: [true, false])
    func anAssetTwiceIsRefused(adjacent: Bool) throws {
        let (scratch, assets) = try bag()
        let twice = BundleLayout.assetPath(assets[7].sha256)
        // Right after itself in Ferry's order, or at the end of a bag in another order.
        var files = files(of: scratch, order: adjacent ? (<) : (>))
        if adjacent, let index = files.firstIndex(of: twice) { files.insert(twice, at: index) } else { files.append(twice) }
        try tar(of: scratch, files).write(to: scratch.file("twice.tar.gz"))
        let found = try findings(scratch.file("twice.tar.gz"))
        #expect(found == ["thrown: \(BundleError.Code.duplicateEntry)"])
    }

    @Test func anUnlistedAssetIsReported() throws {
        let (scratch, _) = try bag()
        let bytes = Data("not listed".utf8)
        let extra = BundleLayout.assetPath(SHA256Hasher.digest(Array(bytes)))
        try tar(of: scratch, files(of: scratch)).add("bag/\(extra)", .file(bytes)).write(to: scratch.file("extra.tar.gz"))
        let found = try findings(scratch.file("extra.tar.gz"))
        #expect(found.contains { $0.contains("\(extra) is not listed in manifest-sha256.txt") })
    }

    /// The asset list leaves memory when large and makes the same bundle, byte for byte; an asset only a rejected
    /// duplicate used is not in it.
    @Test func theAssetListMakesTheSameBundleInAnyMemory() throws {
        let scratch = try Scratch()
        var changes: [RecordChange] = []
        for index in 0..<Self.count {
            // Every third record shares its neighbour's asset.
            let asset = try TestBundles.storeAsset(Data("photo \(index - index % 3 / 2)".utf8), in: scratch.file("assets"))
            changes.append(.record(TestRecords.vehicle(index: index, photo: asset)))
        }
        let orphan = try TestBundles.storeAsset(Data("only the duplicate's".utf8), in: scratch.file("assets"))
        changes.append(.record(TestRecords.vehicle(index: 5, photo: orphan)))
        var bundles: [Data] = []
        for limit in [8 << 20, 2048] {
            var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
            options.admissionMemoryLimit = limit
            options.temporaryDirectory = scratch.path
            // The same name, which is the bag's directory in the archive.
            try FileManager.default.createDirectory(atPath: scratch.file("\(limit)"), withIntermediateDirectories: true)
            let path = scratch.file("\(limit)/bundle.tar.gz")
            let writer = try BundleWriter(path: path, options: options, assets: try DirectoryAssetProvider(root: scratch.file("assets")))
            for change in changes { try writer.add(change) }
            var rejected = 0
            let summary = try writer.finish(createdAt: TestBundles.createdAt, found: { _ in rejected += 1 })
            #expect(rejected == 1)
            #expect(summary.manifest.assetCount == Self.count - Self.count / 3)
            #expect(try !BundleReader(path: path).listsAsset(orphan.sha256))
            bundles.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        #expect(bundles[0] == bundles[1])
        #expect(scratch.listing().filter { $0.hasPrefix("ferry-") }.isEmpty, "no scratch file is left")
    }
}
