import CZstd
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

@testable import FerryBundle

/// A .tar.zst bundle whose creation time is known from the start writes its larger assets while records are still
/// being added, and puts its head before them at the end (``EarlyAssetWriter``).
///
/// The bundle is a valid, reproducible bundle like any other: the same entries with the same bytes, only the larger
/// assets come right after the record files, in the order records first used them, and the others after those, in
/// digest order.
@Suite struct EarlyAssetsTests {
    /// Random (stored raw) and text (compressed) assets of every size class, below and above the threshold, a whole
    /// number of raw blocks among them: the same files as ``AssetFramesTests``.
    static var files: [(name: String, bytes: Data)] { AssetFramesTests.files }

    /// The file two records use, the first and the last.
    static let reused = "video.mov"

    /// How records name their assets.
    enum Naming: String, CaseIterable {
        /// By path, hashed when named, as `pack` does: the bytes are vouched for.
        case path
        /// By content, found at `sha256/<2 hex>/<hex>`: hashed again as they are written.
        case content
    }

    /// Stores the files under `assets` and returns their provider and records using them (``reused`` twice, by its own
    /// record and the last).
    static func setUp(in scratch: Scratch, naming: Naming) throws -> (DirectoryAssetProvider, [RecordChange]) {
        let directory = scratch.file("assets")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let provider = try DirectoryAssetProvider(root: directory)
        var assets: [Asset] = []
        for file in files {
            switch naming {
            case .path:
                try file.bytes.write(to: URL(fileURLWithPath: "\(directory)/\(file.name)"))
                assets.append(try provider.resolve(path: file.name, fileName: nil))
            case .content:
                assets.append(try TestBundles.storeAsset(file.bytes, in: directory))
            }
        }
        let again = try #require(files.firstIndex { $0.name == reused })
        let changes = (assets + [assets[again]]).enumerated().map { index, asset in
            RecordChange.record(
                Record(recordType: "Photo", recordName: "P.\(index)", zoneID: ZoneID(zoneName: "Z"), fields: ["file": .asset(asset)]))
        }
        return (provider, changes)
    }

    /// Writes a .tar.zst bundle of `changes`.
    static func write(
        _ changes: [RecordChange], to path: String, provider: DirectoryAssetProvider, early: Bool = true, inPlace: Bool = true,
        temporaryDirectory: String? = nil
    ) throws -> BundleSummary {
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.temporaryDirectory = temporaryDirectory
        options.format = .tarZstd
        options.createdAt = TestBundles.createdAt
        options.writesAssetsEarly = early
        options.prependsInPlace = inPlace
        let writer = try BundleWriter(path: path, options: options, assets: provider)
        for change in changes {
            guard case .accepted = try writer.add(change) else { throw CoreError(.readFailed, "rejected: \(change.recordName)") }
        }
        return try writer.finish(createdAt: TestBundles.createdAt)
    }

    /// The archive's entry names in order, as `tar` lists them.
    static func entries(of path: String) throws -> [String] {
        let listing = try ProcessResult.run("/usr/bin/tar", ["--zstd", "-tf", path])
        #expect(listing.status == 0, "\(listing.errors)")
        return listing.output.split(separator: "\n").map(String.init)
    }

    @Test("the bundle is valid, holds every asset intact, and the reference tools read it", arguments: Naming.allCases)
    func validAndComplete(naming: Naming) throws {
        let scratch = try Scratch()
        let (provider, changes) = try Self.setUp(in: scratch, naming: naming)
        let path = scratch.file("b.tar.zst")
        try Self.write(changes, to: path, provider: provider)

        let reader = try BundleReader(path: path)
        let report = try reader.verify()
        #expect(report.isValid && report.recordsChecked == changes.count, "\(report.issues)")
        let collector = BundleCompressionTests.AssetCollector()
        try reader.forEachAsset(into: collector)
        #expect(collector.assets.count == Self.files.count)
        for file in Self.files {
            let same = collector.assets[SHA256Hasher.digest(file.bytes)] == file.bytes  // not in #expect: megabytes
            #expect(same, "\(file.name) did not read back intact")
        }
        // The text asset was compressed; the random ones were not, and cost only their framing.
        let size = try #require(FileSignature(path: path)?.size)
        let stored = Self.files.reduce(0) { $0 + $1.bytes.count }
        #expect(size < Int64(stored - (1 << 20)), "\(size) bytes for \(stored) bytes of assets")

        #expect(try ProcessResult.run("/usr/bin/env", ["zstd", "-tq", path]).status == 0)
        try FileManager.default.createDirectory(atPath: scratch.file("x"), withIntermediateDirectories: true)
        let extract = try ProcessResult.run("/usr/bin/tar", ["--zstd", "-xf", path, "-C", scratch.file("x")])
        #expect(extract.status == 0, "\(extract.errors)")
        let validate = try ProcessResult.run("/usr/bin/env", ["python3", "-m", "bagit", "--validate", scratch.file("x/b")])
        #expect(validate.status == 0, "bagit-python refused the bundle: \(validate.errors)")
    }

    @Test("the larger assets follow the records in the order records used them, the rest in digest order")
    func order() throws {
        let scratch = try Scratch()
        let (provider, changes) = try Self.setUp(in: scratch, naming: .path)
        let path = scratch.file("b.tar.zst")
        try Self.write(changes, to: path, provider: provider)
        let names = try Self.entries(of: path)
        let assets = names.filter { $0.contains("/data/assets/") }
        let firstAsset = try #require(names.firstIndex { $0.contains("/data/assets/") })
        #expect(names[..<firstAsset].contains { $0.hasSuffix(".ndjson") }, "the record files come before the assets: \(names)")
        func assetPath(_ name: String) -> String {
            let hex = SHA256Hasher.digest(Self.files.first { $0.name == name }?.bytes ?? Data()).hex
            return "b/data/assets/sha256/\(hex.prefix(2))/\(hex)"
        }
        let early = ["threshold.txt", "piece.jpg", "manual.txt", "video.mov"].map(assetPath)
        let late = Self.files.map(\.name).filter { !early.contains(assetPath($0)) }.map(assetPath).sorted()
        #expect(assets == early + late)
    }

    @Test("the same input gives the same file, shifted in place or written again; and the same entries as a bundle written at the end")
    func reproducible() throws {
        let scratch = try Scratch()
        let (provider, changes) = try Self.setUp(in: scratch, naming: .path)
        for name in ["a", "b", "c", "d"] {
            try FileManager.default.createDirectory(atPath: scratch.file(name), withIntermediateDirectories: true)
        }
        try Self.write(changes, to: scratch.file("a/bundle.tar.zst"), provider: provider)
        try Self.write(changes, to: scratch.file("b/bundle.tar.zst"), provider: provider)
        try Self.write(changes, to: scratch.file("c/bundle.tar.zst"), provider: provider, inPlace: false)
        try Self.write(changes, to: scratch.file("d/bundle.tar.zst"), provider: provider, early: false)
        let first = try scratch.read("a/bundle.tar.zst")
        let second = try scratch.read("b/bundle.tar.zst")
        let rewritten = try scratch.read("c/bundle.tar.zst")
        #expect(first == second, "two runs differ")
        #expect(first == rewritten, "the bundle depends on whether its head was put in place")
        // On a filesystem that cannot shift blocks (tmpfs), the assets go through a scratch file: the same bundle.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue {
            let shm = "/dev/shm/ferry-early-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: shm, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: shm) }
            try Self.write(changes, to: "\(shm)/bundle.tar.zst", provider: provider)
            let onTmpfs = try Data(contentsOf: URL(fileURLWithPath: "\(shm)/bundle.tar.zst"))
            #expect(first == onTmpfs, "the bundle depends on the filesystem it is written to")
            #expect(try FileManager.default.contentsOfDirectory(atPath: shm) == ["bundle.tar.zst"])
        } else {
            print("EarlyAssetsTests: no /dev/shm here; the tmpfs case is not tried")
        }
        #expect(
            scratch.listing().filter { !$0.hasPrefix("assets") }.sorted()
                == ["a", "a/bundle.tar.zst", "b", "b/bundle.tar.zst", "c", "c/bundle.tar.zst", "d", "d/bundle.tar.zst"],
            "no scratch or temporary file is left: \(scratch.listing())")

        // Written at the end, the assets are in digest order; the entries and their bytes are the same.
        let early = try Self.entries(of: scratch.file("a/bundle.tar.zst"))
        let late = try Self.entries(of: scratch.file("d/bundle.tar.zst"))
        #expect(early != late && early.sorted() == late.sorted())
        for (directory, bundle) in [("xa", "a"), ("xd", "d")] {
            try FileManager.default.createDirectory(atPath: scratch.file(directory), withIntermediateDirectories: true)
            let extract = try ProcessResult.run(
                "/usr/bin/tar", ["--zstd", "-xf", scratch.file("\(bundle)/bundle.tar.zst"), "-C", scratch.file(directory)])
            #expect(extract.status == 0, "\(extract.errors)")
        }
        let diff = try ProcessResult.run("/usr/bin/diff", ["-r", scratch.file("xa"), scratch.file("xd")])
        #expect(diff.status == 0, "\(diff.output)")
    }

    @Test(
        "an asset written early whose only record turns out a duplicate is left out: the bundle is written again without it",
        arguments: [true, false])
    func duplicateDropsAnEarlyAsset(inPlace: Bool) throws {
        let scratch = try Scratch()
        var (provider, changes) = try Self.setUp(in: scratch, naming: .path)
        // A second record named P.1 whose asset nothing else uses: rejected when finishing, after its asset was written.
        let only = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
        try only.write(to: URL(fileURLWithPath: scratch.file("assets/only.bin")))
        let asset = try provider.resolve(path: "only.bin", fileName: nil)
        changes.append(.record(Record(recordType: "Photo", recordName: "P.1", zoneID: ZoneID(zoneName: "Z"), fields: ["file": .asset(asset)])))
        let path = scratch.file("b.tar.zst")
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.createdAt = TestBundles.createdAt
        options.prependsInPlace = inPlace
        let writer = try BundleWriter(path: path, options: options, assets: provider)
        for change in changes { _ = try writer.add(change) }
        var rejected: [String] = []
        let summary = try writer.finish(createdAt: TestBundles.createdAt, found: { rejected.append($0.change.recordName) })
        #expect(rejected == ["P.1"] && summary.manifest.assetCount == Self.files.count)
        #expect(try BundleReader(path: path).verify().isValid)
        let hex = asset.sha256.hex
        #expect(try !Self.entries(of: path).contains("b/data/assets/sha256/\(hex.prefix(2))/\(hex)"))
        #expect(scratch.listing().filter { !$0.hasPrefix("assets") } == ["b.tar.zst"], "\(scratch.listing())")
    }

    @Test("an asset found by content whose bytes are not its digest's stops the bundle, and nothing is left", arguments: [true, false])
    func corruptAssetFoundByContent(inPlace: Bool) throws {
        let scratch = try Scratch()
        let (provider, changes) = try Self.setUp(in: scratch, naming: .content)
        // Same size, one byte changed: found by its path as before, but its bytes no longer hash to its name.
        let video = try #require(Self.files.first { $0.name == Self.reused }).bytes
        let hex = SHA256Hasher.digest(video).hex
        var damaged = video
        damaged[damaged.count - 3] ^= 0x55
        try damaged.write(to: URL(fileURLWithPath: scratch.file("assets/sha256/\(hex.prefix(2))/\(hex)")))
        let path = scratch.file("b.tar.zst")
        try FileManager.default.createDirectory(atPath: scratch.file("tmp"), withIntermediateDirectories: true)
        #expect {
            try Self.write(changes, to: path, provider: provider, inPlace: inPlace, temporaryDirectory: scratch.file("tmp"))
        } throws: { error in
            (error as? BundleError)?.code == .assetChanged
        }
        #expect(scratch.listing().filter { !$0.hasPrefix("assets") } == ["tmp"], "\(scratch.listing())")
    }

    @Test("a frame of raw blocks and a skippable frame read back as Zstandard streams")
    func handMadeFrames() throws {
        var generator = SeededGenerator(seed: 5)
        for size in [0, 1, ZstdRawFrame.blockSize, ZstdRawFrame.blockSize + 1, 3 * ZstdRawFrame.blockSize - 2] {
            let content = [UInt8](generator.bytes(size))
            var frame = ZstdSkippableFrame.padding(after: 5, to: 16) + ZstdRawFrame.header
            var offset = 0
            repeat {
                let count = min(ZstdRawFrame.blockSize, size - offset)
                let header = ZstdRawFrame.blockHeader(size: count, last: offset + count == size)
                frame += [header.0, header.1, header.2] + content[offset..<(offset + count)]
                offset += count
            } while offset < size
            let decoded = try frame.withUnsafeBytes { try ZstdFrameDecoder.bytes(of: $0, size: size) }
            #expect(decoded == content, "\(size) bytes")
        }
        for length in [0, 1, 7, 8, 9, 4095, 4096, 4097] {
            let padding = ZstdSkippableFrame.padding(after: Int64(length), to: 4096)
            #expect((length + padding.count) % 4096 == 0 && padding.count >= ZstdSkippableFrame.smallest)
            #expect(padding.count <= 4096 + ZstdSkippableFrame.smallest - 1)
        }
    }
}
