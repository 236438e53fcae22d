import FerryCore
import FerryMapping
import FerryRecords
import FerryTesting
import Foundation
import Testing

/// The assets of a mapped store: inline blobs kept once each in one scratch file, files read where they are.
@Suite struct StoreAssetsTests {
    /// Reads an asset back whole, in reads of `chunk` bytes.
    private func contents(_ assets: StoreAssets, _ asset: Asset, chunk: Int = 7) throws -> [UInt8] {
        let reader = try assets.open(asset)
        var bytes: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = try reader.readBytes(into: buffer)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        try reader.finish()
        return bytes
    }

    @Test func blobsAreKeptOnceEachInOneFileAndReadBackExactly() throws {
        let scratch = try Scratch()
        let assets = try StoreAssets(temporaryDirectory: scratch.path)
        var generator = SeededGenerator(seed: 7)
        let blobs = (0..<20).map { index in (0..<(index * 37 + 1)).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let added = try blobs.map { try assets.addBytes($0, fileName: "photo.jpg") }
        let again = try assets.addBytes(blobs[3], fileName: "other.jpg")
        #expect(again.sha256 == added[3].sha256 && again.size == added[3].size)
        #expect(again.fileName == "other.jpg", "a blob seen again keeps the name it is given this time")
        for (blob, asset) in zip(blobs, added) {
            #expect(asset.sha256 == SHA256Hasher.digest(blob))
            #expect(asset.size == Int64(blob.count))
            #expect(assets.canProvide(asset))
            #expect(try contents(assets, asset) == blob)
        }
        let folders = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("ferry-assets") }
        let folder = try #require(folders.first)
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.file(folder))
        #expect(files == ["blobs"], "one scratch file however many blobs")
        let size = try #require(FileManager.default.attributesOfItem(atPath: scratch.file("\(folder)/blobs"))[.size] as? Int)
        #expect(size == blobs.reduce(0) { $0 + $1.count }, "each blob written once")
    }

    @Test func filesAreReadWhereTheyAreAndUnknownAssetsAreRefused() throws {
        let scratch = try Scratch()
        let assets = try StoreAssets(temporaryDirectory: scratch.path)
        let path = try scratch.write("external", "an externally stored value")
        let asset = try assets.addFile(path)
        #expect(try contents(assets, asset) == Array("an externally stored value".utf8))
        let unknown = Asset(sha256: SHA256Hasher.digest([1, 2, 3]), size: 3)
        #expect(!assets.canProvide(unknown))
        #expect(throws: CoreError.self) { try assets.open(unknown) }
    }

    @Test func theScratchFolderGoesWithTheAssets() throws {
        let scratch = try Scratch()
        var assets: StoreAssets? = try StoreAssets(temporaryDirectory: scratch.path)
        _ = try assets?.addBytes([1, 2, 3])
        // The scratch folder, and the run's lock beside it while the folder is there.
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        #expect(names.filter { !$0.hasPrefix("ferry-run.") }.count == 1 && names.count == 2, "\(names)")
        assets = nil
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }
}
