import FerryBundle
import FerryCore
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// A tar archive's compressor runs beside the writing thread: gzip on a thread of its own fed 1 MiB chunks through a
/// queue, Zstandard on its own workers in 1 MiB jobs.
@Suite struct BundleCompressionTests {
    /// 24 MB of compressible, non-repeating text (many chunks, with entry boundaries inside chunks).
    static let manualText = TestBundles.compressibleText(count: 24 << 20, seed: 11)

    /// Collects asset bytes by digest.
    final class AssetCollector: BundleAssetSink {
        var assets: [SHA256Digest: Data] = [:]
        private var current = Data()
        func wants(_ digest: SHA256Digest, size: Int64?) -> Bool { true }
        func begin(_ digest: SHA256Digest) throws { current = Data() }
        func append(_ bytes: UnsafeRawBufferPointer) throws { current.append(contentsOf: bytes) }
        func end(_ digest: SHA256Digest) throws { assets[digest] = current }
    }

    @Test(
        "a payload of many compression chunks reads back byte for byte, and writing it twice gives the same file",
        arguments: ArchiveFormat.allCases)
    func manyChunksRoundTrip(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        let (changes, manual) = try BundleRoundTripTests.changes(assets: scratch.file("assets"), manual: Self.manualText)
        var files: [Data] = []
        for attempt in 0..<2 {
            try FileManager.default.createDirectory(atPath: scratch.file("\(attempt)"), withIntermediateDirectories: true)
            let path = scratch.file("\(attempt)/b.\(format.rawValue)")
            try TestBundles.write(changes, to: path, assetDirectory: scratch.file("assets"))
            let reader = try BundleReader(path: path)
            let report = try reader.verify()
            #expect(report.isValid, "\(report.issues)")
            let collector = AssetCollector()
            try reader.forEachAsset(into: collector)
            let same = collector.assets[manual.sha256] == Self.manualText  // not in #expect: it would print 24 MB
            #expect(same, "the 24 MB asset did not read back intact")
            files.append(try scratch.read("\(attempt)/b.\(format.rawValue)"))
        }
        let identical = files[0] == files[1]
        #expect(identical, "two writes of the same \(format.rawValue) bundle differ")
    }

    @Test("the zstd tool checks a .tar.zst bundle's content checksum, and tar --zstd extracts its assets intact")
    func zstdToolReadsTheBundle() throws {
        let scratch = try Scratch()
        let (changes, manual) = try BundleRoundTripTests.changes(assets: scratch.file("assets"), manual: Self.manualText)
        let path = scratch.file("b.tar.zst")
        try TestBundles.write(changes, to: path, assetDirectory: scratch.file("assets"))
        let listing = try ProcessResult.run("/usr/bin/env", ["zstd", "-lv", path])
        #expect(listing.status == 0, "\(listing.errors)")
        #expect(listing.output.contains("Check: XXH64"), "no content checksum: \(listing.output)")
        let tested = try ProcessResult.run("/usr/bin/env", ["zstd", "-t", path])
        #expect(tested.status == 0, "zstd -t failed: \(tested.errors)")
        // The tar inside holds the manual as it was written.
        let extracted = scratch.file("x")
        try FileManager.default.createDirectory(atPath: extracted, withIntermediateDirectories: true)
        let untar = try ProcessResult.run("/usr/bin/tar", ["--zstd", "-xf", path, "-C", extracted])
        #expect(untar.status == 0, "\(untar.errors)")
        let hex = manual.sha256.hex
        let stored = try Data(contentsOf: URL(fileURLWithPath: extracted + "/b/data/assets/sha256/\(hex.prefix(2))/\(hex)"))
        let same = stored == Self.manualText  // not in #expect: it would print 24 MB
        #expect(same, "the manual extracted by tar --zstd differs from the asset")
    }

    /// Gives an asset's bytes until `failAfter`, then fails as a disk would.
    final class FailingAssets: AssetProvider, @unchecked Sendable {
        let failAfter: Int
        init(failAfter: Int) { self.failAfter = failAfter }
        func canProvide(_ asset: Asset) -> Bool { true }
        func open(_ asset: Asset) throws -> any AssetReading { Reader(failAfter: failAfter) }

        final class Reader: AssetReading {
            let failAfter: Int
            var given = 0
            init(failAfter: Int) { self.failAfter = failAfter }
            var isVerified: Bool { true }
            // Through the public protocol alone (no buffer reading): what a reader outside Ferry implements.
            func read(upTo maxCount: Int) throws -> [UInt8] {
                guard given < failAfter else { throw CoreError(.readFailed, "the disk went away") }
                let count = min(maxCount, failAfter - given)
                given += count
                return [UInt8](repeating: 0x5A, count: count)
            }
            func finish() throws {}
        }
    }

    @Test(
        "a failure while the compressor is busy stops the write cleanly: the error surfaces, nothing is left behind",
        arguments: ArchiveFormat.allCases)
    func failureMidStream(format: ArchiveFormat) throws {
        let scratch = try Scratch()
        var options = BundleWriter.Options(source: .init(kind: "test", description: ""))
        options.format = format
        let path = scratch.file("out/b.\(format.rawValue)")
        try FileManager.default.createDirectory(atPath: scratch.file("out"), withIntermediateDirectories: true)
        let writer = try BundleWriter(path: path, options: options, assets: FailingAssets(failAfter: 9 << 20))
        let big = Asset(sha256: SHA256Hasher.digest(Array("big".utf8)), size: 32 << 20, fileName: "big.bin")
        for index in 0..<2000 {
            var car = TestRecords.vehicle("Car", index: index)
            if index == 0 { car.fields["photo"] = .asset(big) }
            #expect(try writer.add(.record(car)) == .accepted(warnings: []))
        }
        #expect(throws: CoreError.self) { try writer.finish(createdAt: Date(timeIntervalSince1970: 0)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("out")).isEmpty)
    }
}
