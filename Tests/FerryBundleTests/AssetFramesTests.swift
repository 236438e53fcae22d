import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Synchronization
import Testing

@testable import FerryBundle

/// A .tar.zst bundle's larger assets go as frames made by workers, and the tar inside is the same either way.
///
/// Assets of 64 KiB or more whose bytes are vouched for are read and compressed in 1 MiB pieces, one frame each;
/// smaller ones, and the others, go the usual way. An asset that changed after it was hashed stops the bundle.
@Suite struct AssetFramesTests {
    /// Files of every size class: below the frame threshold, at it, one whole piece, several pieces with a short last
    /// one; random (incompressible) and text; and small ones, which go the usual way in batches between the others.
    static let files: [(name: String, bytes: Data)] = {
        var generator = SeededGenerator(seed: 41)
        func random(_ count: Int) -> Data { generator.bytes(count) }
        return [
            ("empty.bin", Data()),
            ("small.jpg", random(10 << 10)),
            ("threshold.txt", TestBundles.compressibleText(count: 64 << 10, seed: 1).prefix(64 << 10)),
            ("piece.jpg", random(1 << 20)),
            ("manual.txt", TestBundles.compressibleText(count: (5 << 19) + 7, seed: 2)),
            ("video.mov", random(3 << 20)),
        ] + (0..<12).map { ("note-\($0).txt", random(1000 + $0 * 300)) }
    }()

    /// Stores the files in `directory` and returns records naming them, each asset hashed by its path as `pack` does
    /// (so its bytes are vouched for).
    private func records(in directory: String, provider: DirectoryAssetProvider) throws -> [RecordChange] {
        try Self.files.enumerated().map { index, file in
            try file.bytes.write(to: URL(fileURLWithPath: "\(directory)/\(file.name)"))
            let asset = try provider.resolve(path: file.name, fileName: nil)
            return .record(Record(recordType: "Photo", recordName: "P.\(index)", zoneID: ZoneID(zoneName: "Z"), fields: ["file": .asset(asset)]))
        }
    }

    private func write(
        _ changes: [RecordChange], to path: String, provider: DirectoryAssetProvider, format: ArchiveFormat, workers: Int = 2
    ) throws {
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = format
        options.zstdWorkers = workers
        let writer = try BundleWriter(path: path, options: options, assets: provider)
        for change in changes {
            guard case .accepted = try writer.add(change) else { throw CoreError(.readFailed, "rejected: \(change.recordName)") }
        }
        try writer.finish(createdAt: TestBundles.createdAt)
    }

    @Test func largeAssetsGoAsFramesAndTheTarIsTheSameAsInATarGz() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("assets"), withIntermediateDirectories: true)
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"))
        let changes = try records(in: scratch.file("assets"), provider: provider)
        let zst = scratch.file("b.tar.zst")
        try write(changes, to: zst, provider: provider, format: .tarZstd)
        try FileManager.default.createDirectory(atPath: scratch.file("one"), withIntermediateDirectories: true)
        try write(changes, to: scratch.file("one/b.tar.zst"), provider: provider, format: .tarZstd, workers: 1)
        try write(changes, to: scratch.file("b.tar.gz"), provider: provider, format: .tarGzip)

        let reader = try BundleReader(path: zst)
        let report = try reader.verify()
        #expect(report.isValid && report.recordsChecked == Self.files.count, "\(report.issues)")
        let collector = BundleCompressionTests.AssetCollector()
        try reader.forEachAsset(into: collector)
        for file in Self.files {
            let same = collector.assets[SHA256Hasher.digest(file.bytes)] == file.bytes  // not in #expect: megabytes
            #expect(same, "\(file.name) did not read back intact")
        }

        let fromZstd = try ProcessResult.run("/usr/bin/env", ["zstd", "-dc", zst])
        let fromGzip = try ProcessResult.run("/usr/bin/env", ["gzip", "-dc", scratch.file("b.tar.gz")])
        #expect(fromZstd.status == 0 && fromGzip.status == 0, "\(fromZstd.errors) \(fromGzip.errors)")
        let sameTar = fromZstd.stdout == fromGzip.stdout
        #expect(sameTar, "the .tar.zst and the .tar.gz hold different tar streams")
        // 1 + 1 + 3 + 3 pieces of the four larger files, each a frame of its own, besides the rest.
        let listing = try ProcessResult.run("/usr/bin/env", ["zstd", "-lv", zst])
        let frames = listing.output.split(separator: "\n").first { $0.contains("# Zstandard Frames") }
        let count = frames.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        #expect((count ?? 0) >= 8, "\(listing.output)")
        // One worker or two, the same bundle.
        let same = try scratch.read("b.tar.zst") == scratch.read("one/b.tar.zst")
        #expect(same, "the bundle depends on the number of workers")
    }

    @Test("an asset that changed after it was hashed stops the bundle, and nothing is left", arguments: [ArchiveFormat.tarZstd, .tarGzip])
    func anAssetChangedAfterItWasHashedIsRefused(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("assets"), withIntermediateDirectories: true)
        let provider = try DirectoryAssetProvider(root: scratch.file("assets"))
        let changes = try records(in: scratch.file("assets"), provider: provider)
        // Rewritten after it was hashed: the same size, other bytes, another modification time.
        var video = Self.files[5].bytes
        video[video.count / 2] ^= 0xFF
        try video.write(to: URL(fileURLWithPath: scratch.file("assets/video.mov")))
        let path = scratch.file("b.\(format.rawValue)")
        #expect {
            try write(changes, to: path, provider: provider, format: format)
        } throws: { error in
            (error as? BundleError)?.code == .assetChanged
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(scratch.listing().filter { $0.hasPrefix(".b.") || $0.hasPrefix("ferry-") }.isEmpty, "\(scratch.listing())")
    }

    /// Serves the files by digest a request at a time, as a backend does: read in order only, not vouched for, each
    /// open counted; `damage` changes what it serves of one asset.
    private final class FetchingProvider: FetchingAssetProvider {
        let files: [SHA256Digest: [UInt8]]
        let damage: (digest: SHA256Digest, bytes: [UInt8])?
        let opens = Mutex<[SHA256Digest: Int]>([:])

        init(damage: (name: String, bytes: [UInt8])? = nil) {
            var files: [SHA256Digest: [UInt8]] = [:]
            for file in AssetFramesTests.files { files[SHA256Hasher.digest(file.bytes)] = Array(file.bytes) }
            self.files = files
            self.damage = damage.flatMap { damage in
                AssetFramesTests.files.first { $0.name == damage.name }.map { (SHA256Hasher.digest($0.bytes), damage.bytes) }
            }
        }

        func canProvide(_ asset: Asset) throws -> Bool { files[asset.sha256] != nil }

        func open(_ asset: Asset) throws -> any AssetReading {
            opens.withLock { $0[asset.sha256, default: 0] += 1 }
            guard let bytes = damage?.digest == asset.sha256 ? damage?.bytes : files[asset.sha256] else {
                throw CoreError(.fileNotFound, "no asset \(asset.sha256)")
            }
            return Reader(bytes)
        }

        final class Reader: AssetReading {
            var rest: ArraySlice<UInt8>
            init(_ bytes: [UInt8]) { rest = bytes[...] }
            var isVerified: Bool { false }
            func read(upTo maxCount: Int) throws -> [UInt8] {
                let piece = rest.prefix(min(maxCount, 70_000))
                rest = rest.dropFirst(piece.count)
                return Array(piece)
            }
            func finish() throws {}
        }
    }

    @Test func assetsFetchedByRequestsAreReadOnWorkersAndWrittenAsFromFiles() throws {
        let scratch = try Scratch()
        // The same name in three directories: a bundle's name is its directory's in the archive.
        for directory in ["assets", "fetched", "files"] {
            try FileManager.default.createDirectory(atPath: scratch.file(directory), withIntermediateDirectories: true)
        }
        let files = try DirectoryAssetProvider(root: scratch.file("assets"))
        let changes = try records(in: scratch.file("assets"), provider: files)
        let fetching = FetchingProvider()
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = .tarZstd
        let writer = try BundleWriter(path: scratch.file("fetched/b.tar.zst"), options: options, assets: fetching)
        for change in changes { _ = try writer.add(change) }
        try writer.finish(createdAt: TestBundles.createdAt)
        try write(changes, to: scratch.file("files/b.tar.gz"), provider: files, format: .tarGzip)

        let report = try BundleReader(path: scratch.file("fetched/b.tar.zst")).verify()
        #expect(report.isValid && report.recordsChecked == Self.files.count, "\(report.issues)")
        let fromZstd = try ProcessResult.run("/usr/bin/env", ["zstd", "-dc", scratch.file("fetched/b.tar.zst")])
        let fromGzip = try ProcessResult.run("/usr/bin/env", ["gzip", "-dc", scratch.file("files/b.tar.gz")])
        let sameTar = fromZstd.status == 0 && fromZstd.stdout == fromGzip.stdout
        #expect(sameTar, "fetched assets are written as assets read from files")
        // An asset of at most a piece is opened once, by a worker; a larger one is read in order, whole.
        let opens = fetching.opens.withLock { $0 }
        for file in Self.files where file.bytes.count <= 1 << 20 {
            #expect(opens[SHA256Hasher.digest(file.bytes)] == 1, "\(file.name)")
        }
    }

    @Test("a fetched asset that is not its digest or size stops the bundle", arguments: ["other", "short", "long"])
    func aFetchedAssetThatIsNotItsDigestStopsTheBundle(damage: String) throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("assets"), withIntermediateDirectories: true)
        let changes = try records(in: scratch.file("assets"), provider: try DirectoryAssetProvider(root: scratch.file("assets")))
        var bytes = Array(Self.files[3].bytes)
        switch damage {
        case "other": bytes[bytes.count / 2] ^= 0xFF
        case "short": bytes.removeLast()
        default: bytes.append(0)
        }
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = .tarZstd
        let path = scratch.file("b.tar.zst")
        let writer = try BundleWriter(path: path, options: options, assets: FetchingProvider(damage: (Self.files[3].name, bytes)))
        for change in changes { _ = try writer.add(change) }
        #expect {
            try writer.finish(createdAt: TestBundles.createdAt)
        } throws: { error in
            let error = error as? BundleError
            let said = damage == "other" ? "does not have that SHA-256" : damage == "short" ? "shrank" : "grew"
            return error?.code == .assetChanged && error?.message.contains(said) == true
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
